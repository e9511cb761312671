import Testing

@testable import LoginPages

@Suite("HTML builder")
struct HTMLTests {
    @Test func textAndAttributesAreEscaped() {
        let node = HTMLNode.element(
            "p", ["title": "\"><script>x</script>", "data-x": "it's"], [.text("<b>&</b>")])
        #expect(
            node.render()
                == "<p title=\"&quot;&gt;&lt;script&gt;x&lt;/script&gt;\" data-x=\"it&#39;s\">&lt;b&gt;&amp;&lt;/b&gt;</p>"
        )
    }

    @Test func voidElementsHaveNoEndTagAndBooleanAttributesNoValue() {
        let node = HTMLNode.element("input", ["name": "email", "required": HTMLNode.on, "value": nil])
        #expect(node.render() == "<input name=\"email\" required>")
    }

    @Test func nulCharactersAreReplaced() {
        #expect(HTMLNode.text("a\u{0}b").render() == "a\u{FFFD}b")
    }
}

@Suite("Language negotiation")
struct PageLanguageTests {
    @Test(
        arguments: [
            ("ja", nil, PageLanguage.ja), ("fr ja-JP", nil, .ja), ("en", "ja", .en),
            (nil, "ja-JP,ja;q=0.9,en;q=0.8", .ja),
            (nil, "en-US,ja;q=0.5", .en), (nil, "fr, ja;q=0.2", .ja), (nil, "ja;q=0", .en), (nil, nil, .en),
            ("", "", .en),
        ] as [(String?, String?, PageLanguage)])
    func negotiation(_ uiLocales: String?, _ acceptLanguage: String?, _ expected: PageLanguage) {
        #expect(PageLanguage.negotiate(uiLocales: uiLocales, acceptLanguage: acceptLanguage) == expected)
    }

    @Test func everyStringIsTranslated() {
        for key in Strings.Key.allCases {
            #expect(!Strings(.en)[key].isEmpty)
            #expect(!Strings(.ja)[key].isEmpty)
            #expect(Strings(.en)[key] != Strings(.ja)[key] || key == .or, "\(key)")
        }
    }
}
