import Crypto

/// Strictly decodes one base64url member of a JSON response, naming it on failure.
func decodeBase64URL(_ text: String, field: String) throws(WebAuthnError) -> [UInt8] {
    do { return try Base64URL.decode(text) } catch { throw .invalidBase64URL(field: field) }
}

func sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

func constantTimeEqualBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool { constantTimeEquals(a, b) }
