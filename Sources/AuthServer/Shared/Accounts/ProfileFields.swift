import Foundation

/// The optional profile claims an account holds beside its display name (OpenID Connect Core
/// §5.1): nil is "not set", and such a claim is left out of ID tokens and userinfo, never sent
/// as null.
struct ProfileFields: Sendable, Equatable {
    var givenName: String?
    var familyName: String?
    var preferredUsername: String?
    /// A BCP 47 language tag (RFC 5646), in its canonical letter case.
    var locale: String?
    /// An absolute https URL of a picture of the account holder.
    var picture: String?

    /// The fields by their claim names, in the order the page and the API list them.
    enum Field: String, Sendable, CaseIterable {
        case givenName = "given_name"
        case familyName = "family_name"
        case preferredUsername = "preferred_username"
        case locale
        case picture

        var keyPath: WritableKeyPath<ProfileFields, String?> {
            switch self {
            case .givenName: \.givenName
            case .familyName: \.familyName
            case .preferredUsername: \.preferredUsername
            case .locale: \.locale
            case .picture: \.picture
            }
        }

        /// What a valid value looks like, for the error that refuses one.
        var rule: String {
            switch self {
            case .givenName, .familyName:
                "at most \(ProfileFields.nameMaxLength) characters, without control characters"
            case .preferredUsername:
                "at most \(ProfileFields.usernameMaxLength) characters, without control characters"
            case .locale: "a BCP 47 language tag such as en or ja-JP"
            case .picture:
                "an https URL of at most \(ProfileFields.pictureMaxLength) characters, without a user name or password"
            }
        }
    }

    static let nameMaxLength = 200
    static let usernameMaxLength = 64
    static let pictureMaxLength = 2048
    /// RFC 5646 §4.4.1 asks for at least 35 characters; the table allows 64.
    static let localeMaxLength = 64

    /// A field the account holder or operator entered that breaks its rule.
    struct Invalid: Error, Equatable {
        var field: Field
    }

    subscript(field: Field) -> String? {
        get { self[keyPath: field.keyPath] }
        set { self[keyPath: field.keyPath] = newValue }
    }

    /// Checks one value as entered: surrounding white space is trimmed, and an empty value
    /// means "remove" (nil). Throws `Invalid` naming the field.
    static func validate(_ text: String, for field: Field) throws(Invalid) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return nil }
        let valid: String? =
            switch field {
            case .givenName, .familyName: plainText(trimmed, maxLength: nameMaxLength)
            case .preferredUsername: plainText(trimmed, maxLength: usernameMaxLength)
            case .locale: languageTag(trimmed)
            case .picture: httpsURL(trimmed)
            }
        guard let valid else { throw Invalid(field: field) }
        return valid
    }

    /// Text of at most `maxLength` characters (Unicode scalars, as PostgreSQL's `length`
    /// counts them) with no control character: a name is shown in other apps' pages and
    /// logs, where a newline or an escape would be read as structure.
    static func plainText(_ text: String, maxLength: Int) -> String? {
        guard text.unicodeScalars.count <= maxLength,
            !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        return text
    }

    /// A well-formed language tag (RFC 5646 §2.1 `langtag`, or a private-use tag), in the
    /// canonical case of §2.1.1 (language lowercase, script titlecase, region uppercase).
    /// Well-formedness only: the registry's contents are not checked, so a new region code
    /// needs no new release. Underscores (`ja_JP`), which some systems write, are refused:
    /// OpenID Connect Core §5.1 names BCP 47, whose separator is the hyphen.
    static func languageTag(_ text: String) -> String? {
        guard text.count <= localeMaxLength,
            text.unicodeScalars.allSatisfy({
                $0.isASCII && ($0 == "-" || $0.properties.isAlphabetic || ("0"..."9").contains($0))
            })
        else { return nil }
        let subtags = text.lowercased().split(separator: "-", omittingEmptySubsequences: false).map(
            String.init)
        guard subtags.allSatisfy({ (1...8).contains($0.count) }) else { return nil }
        func alpha(_ s: String, _ lengths: ClosedRange<Int>) -> Bool {
            lengths.contains(s.count) && s.allSatisfy { $0.isLetter }
        }
        func digits(_ s: String, _ count: Int) -> Bool { s.count == count && s.allSatisfy { $0.isNumber } }
        func alphanumeric(_ s: String, _ lengths: ClosedRange<Int>) -> Bool { lengths.contains(s.count) }

        var index = 0
        var output: [String] = []
        // privateuse = "x" 1*("-" (1*8alphanum)): a whole tag of private use.
        if subtags[0] == "x" {
            return subtags.count > 1 ? subtags.joined(separator: "-") : nil
        }
        // language = 2*3ALPHA ["-" extlang] / 4ALPHA / 5*8ALPHA
        guard alpha(subtags[0], 2...8) else { return nil }
        output.append(subtags[0])
        index = 1
        if subtags[0].count <= 3 {
            // extlang = 3ALPHA *2("-" 3ALPHA)
            var extlangs = 0
            while index < subtags.count, extlangs < 3, alpha(subtags[index], 3...3) {
                output.append(subtags[index])
                index += 1
                extlangs += 1
            }
        }
        // ["-" script] script = 4ALPHA
        if index < subtags.count, alpha(subtags[index], 4...4) {
            output.append(subtags[index].prefix(1).uppercased() + subtags[index].dropFirst())
            index += 1
        }
        // ["-" region] region = 2ALPHA / 3DIGIT
        if index < subtags.count, alpha(subtags[index], 2...2) || digits(subtags[index], 3) {
            output.append(subtags[index].uppercased())
            index += 1
        }
        // *("-" variant) variant = 5*8alphanum / (DIGIT 3alphanum); no variant twice (§2.2.5).
        var variants: Set<String> = []
        while index < subtags.count {
            let subtag = subtags[index]
            let isVariant =
                alphanumeric(subtag, 5...8) || (subtag.count == 4 && subtag.first?.isNumber == true)
            guard isVariant else { break }
            guard variants.insert(subtag).inserted else { return nil }
            output.append(subtag)
            index += 1
        }
        // *("-" extension) extension = singleton 1*("-" (2*8alphanum)); no singleton twice (§2.2.6).
        var singletons: Set<String> = []
        while index < subtags.count, subtags[index].count == 1, subtags[index] != "x" {
            let singleton = subtags[index]
            guard singletons.insert(singleton).inserted else { return nil }
            output.append(singleton)
            index += 1
            var parts = 0
            while index < subtags.count, alphanumeric(subtags[index], 2...8) {
                output.append(subtags[index])
                index += 1
                parts += 1
            }
            guard parts > 0 else { return nil }
        }
        // ["-" privateuse]
        if index < subtags.count, subtags[index] == "x" {
            guard index + 1 < subtags.count else { return nil }
            output += subtags[index...]
            index = subtags.count
        }
        return index == subtags.count ? output.joined(separator: "-") : nil
    }

    /// An absolute `https` URL with a host and no user name or password: relying parties
    /// fetch and show it, so it must not be a script, a file, plain http (mixed content) or a
    /// way to send someone's credentials along.
    static func httpsURL(_ text: String) -> String? {
        guard text.unicodeScalars.count <= pictureMaxLength,
            text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value != 0x7F }),
            text.lowercased().hasPrefix("https://"),
            let components = URLComponents(string: text),
            components.scheme?.lowercased() == "https",
            let host = components.host, !host.isEmpty,
            components.user == nil, components.password == nil,
            !text.dropFirst("https://".count).prefix(while: { !"/?#".contains($0) }).contains("@")
        else { return nil }
        return text
    }
}

/// A change of the profile as the account holder (`PATCH /api/account`) asks for it: nil
/// leaves a value as it is.
struct ProfileChange: Sendable, Equatable {
    /// The display name (`name` claim); it cannot be removed.
    var displayName: String?
    /// The optional fields: `.some(nil)` removes one, `.some(value)` sets it.
    var fields: [ProfileFields.Field: String?] = [:]

    /// The first value that breaks its rule.
    enum Problem: Error, Equatable {
        case displayName
        case field(ProfileFields.Field)
    }

    /// The change with every value checked and trimmed (`AccountStore.validDisplayName`,
    /// `ProfileFields.validate`), so that nothing is written unless all of it is valid.
    func validated() throws(Problem) -> ProfileChange {
        var checked = ProfileChange()
        if let displayName {
            guard let valid = AccountStore.validDisplayName(displayName) else { throw .displayName }
            checked.displayName = valid
        }
        for field in ProfileFields.Field.allCases {
            guard let value = fields[field] else { continue }
            guard let text = value else {
                checked.fields[field] = .some(nil)
                continue
            }
            do {
                checked.fields[field] = .some(try ProfileFields.validate(text, for: field))
            } catch {
                throw .field(field)
            }
        }
        return checked
    }

    /// The stored profile with this change applied.
    func applied(to profile: ProfileFields) -> ProfileFields {
        var result = profile
        for (field, value) in fields { result[field] = value }
        return result
    }
}
