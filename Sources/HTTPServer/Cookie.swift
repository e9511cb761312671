import Foundation

/// A `Set-Cookie` value. Defaults are the safe ones for session cookies: `Secure`,
/// `HttpOnly`, `SameSite=Lax`, path `/`.
public struct Cookie: Sendable, Hashable {
    public enum SameSite: String, Sendable, Hashable {
        case lax = "Lax"
        case strict = "Strict"
        case none = "None"
    }

    public var name: String
    public var value: String
    public var path: String
    public var domain: String?
    public var maxAge: Int?
    public var expires: Date?
    public var secure: Bool
    public var httpOnly: Bool
    public var sameSite: SameSite?

    public init(
        name: String, value: String, path: String = "/", domain: String? = nil, maxAge: Int? = nil,
        expires: Date? = nil, secure: Bool = true, httpOnly: Bool = true, sameSite: SameSite? = .lax
    ) {
        self.name = name
        self.value = value
        self.path = path
        self.domain = domain
        self.maxAge = maxAge
        self.expires = expires
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
    }

    /// A cookie that tells the browser to delete `name` (empty value, `Max-Age=0`, past expiry).
    public static func expired(
        name: String, path: String = "/", domain: String? = nil, secure: Bool = true, httpOnly: Bool = true,
        sameSite: SameSite? = .lax
    ) -> Cookie {
        Cookie(
            name: name, value: "", path: path, domain: domain, maxAge: 0,
            expires: Date(timeIntervalSince1970: 0),
            secure: secure, httpOnly: httpOnly, sameSite: sameSite)
    }

    /// The `Set-Cookie` header value. Characters outside cookie-octet (RFC 6265 §4.1.1) in the
    /// value, and `;`/control characters in attributes, are percent-encoded so a value can
    /// never inject attributes or headers.
    public var headerValue: String {
        var out = Cookie.encode(name, allowed: Cookie.isTokenByte)
        out += "="
        out += Cookie.encode(value, allowed: Cookie.isCookieOctet)
        out += "; Path=" + Cookie.encode(path, allowed: Cookie.isAttributeByte)
        if let domain { out += "; Domain=" + Cookie.encode(domain, allowed: Cookie.isAttributeByte) }
        if let maxAge { out += "; Max-Age=\(maxAge)" }
        if let expires { out += "; Expires=" + HTTPDate.format(expires) }
        if secure { out += "; Secure" }
        if httpOnly { out += "; HttpOnly" }
        if let sameSite { out += "; SameSite=" + sameSite.rawValue }
        return out
    }

    private static func isCookieOctet(_ b: UInt8) -> Bool {
        b == 0x21 || (0x23...0x2B).contains(b) || (0x2D...0x3A).contains(b) || (0x3C...0x5B).contains(b)
            || (0x5D...0x7E).contains(b)
    }

    private static func isAttributeByte(_ b: UInt8) -> Bool {
        b >= 0x20 && b < 0x7F && b != UInt8(ascii: ";")
    }

    private static func isTokenByte(_ b: UInt8) -> Bool { RequestParser.isTokenByte(b) }

    private static func encode(_ s: String, allowed: (UInt8) -> Bool) -> String {
        if s.utf8.allSatisfy(allowed) { return s }
        var out = ""
        for b in s.utf8 {
            if allowed(b) && b != UInt8(ascii: "%") {
                out.unicodeScalars.append(Unicode.Scalar(b))
            } else {
                out += "%" + String(b, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
