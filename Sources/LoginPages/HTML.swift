/// A node of an HTML document. Text and attribute values are escaped when rendered, so a
/// page built from nodes cannot be broken by a hostile display name or passkey name: there
/// is no way to put unescaped text into a node.
public struct HTMLNode: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case element(name: String, attributes: [Attribute], children: [HTMLNode])
        case text(String)
        case fragment([HTMLNode])
    }

    struct Attribute: Sendable, Equatable {
        var name: String
        /// nil: a boolean attribute written by its name alone.
        var value: String?
    }

    let kind: Kind

    /// Elements that have no end tag.
    static let voidElements: Set<String> = ["input", "meta", "link", "br", "img", "hr"]

    public static func text(_ text: String) -> HTMLNode { HTMLNode(kind: .text(text)) }
    public static func fragment(_ nodes: [HTMLNode]) -> HTMLNode { HTMLNode(kind: .fragment(nodes)) }

    /// `attributes` pairs with a nil value are left out; use `HTMLNode.on` for boolean ones.
    public static func element(
        _ name: String, _ attributes: KeyValuePairs<String, String?> = [:], _ children: [HTMLNode] = []
    ) -> HTMLNode {
        var list: [Attribute] = []
        for (key, value) in attributes {
            guard let value else { continue }
            list.append(Attribute(name: key, value: value == HTMLNode.on ? nil : value))
        }
        return HTMLNode(kind: .element(name: name, attributes: list, children: children))
    }

    /// The value that turns an attribute into a boolean one (`required`, `hidden`).
    public static let on = "\u{0}on"

    public func render() -> String {
        var out = ""
        render(into: &out)
        return out
    }

    func render(into out: inout String) {
        switch kind {
        case .text(let text):
            out += HTMLNode.escapeText(text)
        case .fragment(let nodes):
            for node in nodes { node.render(into: &out) }
        case .element(let name, let attributes, let children):
            out += "<" + name
            for attribute in attributes {
                out += " " + attribute.name
                if let value = attribute.value { out += "=\"" + HTMLNode.escapeAttribute(value) + "\"" }
            }
            out += ">"
            if HTMLNode.voidElements.contains(name) { return }
            for child in children { child.render(into: &out) }
            out += "</" + name + ">"
        }
    }

    static func escapeText(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\u{0}": out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text` for an attribute value or text, escaped code point by code point: a character
    /// compared whole would miss a `<` that a preceding "prepend" code point (U+0600) joins into
    /// one grapheme with it. The mail templates use it too.
    public static func escapeAttribute(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\u{0}": out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

extension HTMLNode: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
}

/// Short names for the elements the pages use.
enum H {
    static func el(
        _ name: String, _ attributes: KeyValuePairs<String, String?> = [:], _ children: [HTMLNode] = []
    )
        -> HTMLNode
    { .element(name, attributes, children) }
    static func text(_ value: String) -> HTMLNode { .text(value) }
    static func div(_ attributes: KeyValuePairs<String, String?> = [:], _ children: [HTMLNode] = [])
        -> HTMLNode
    {
        .element("div", attributes, children)
    }
    static func p(_ attributes: KeyValuePairs<String, String?> = [:], _ children: [HTMLNode] = []) -> HTMLNode
    {
        .element("p", attributes, children)
    }
    static func hidden(_ name: String, _ value: String?) -> HTMLNode {
        guard let value else { return .fragment([]) }
        return .element("input", ["type": "hidden", "name": name, "value": value])
    }
}
