import Crypto
import Foundation

/// Produces compact JWS objects (RFC 7515 §7.1) with one private key.
public struct JWSSigner: Sendable {
    public let privateKey: SigningPrivateKey
    public let algorithm: JWSAlgorithm
    public let keyID: String?

    /// Refuses an algorithm that does not fit the key, so a misconfiguration fails at
    /// start-up rather than producing tokens nobody can verify.
    public init(privateKey: SigningPrivateKey, algorithm: JWSAlgorithm, keyID: String?) throws(JOSEError) {
        guard privateKey.publicKey.fits(algorithm) else { throw .algorithmKeyMismatch }
        self.privateKey = privateKey
        self.algorithm = algorithm
        self.keyID = keyID
    }

    /// Signs `payload`. The header carries `alg`, `kid` (if set), `typ` (if set: `JWT`,
    /// `at+jwt` for RFC 9068 access tokens, `logout+jwt` for logout tokens) and
    /// `extraHeader` members, serialised with sorted keys.
    public func sign(
        payload: some DataProtocol, type: String? = "JWT", extraHeader: [String: String] = [:]
    ) throws(JOSEError) -> String {
        var header = extraHeader
        for reserved in ["alg", "kid", "typ", "crit", "b64", "jwk", "jku", "x5u", "x5c"] where header[reserved] != nil {
            throw .malformed
        }
        header["alg"] = algorithm.rawValue
        if let keyID { header["kid"] = keyID }
        if let type { header["typ"] = type }
        let signingInput = Base64URL.encode(JSONBody.encode(header)) + "." + Base64URL.encode(Array(payload))
        let signature = try privateKey.sign(Array(signingInput.utf8), algorithm: algorithm)
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Signs the JSON encoding of `claims` (sorted keys, unescaped slashes, `Date` as
    /// seconds since 1970, i.e. a NumericDate).
    public func sign<Claims: Encodable>(
        claims: Claims, type: String? = "JWT", extraHeader: [String: String] = [:]
    ) throws(JOSEError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .secondsSince1970
        guard let payload = try? encoder.encode(claims) else { throw .malformed }
        return try sign(payload: payload, type: type, extraHeader: extraHeader)
    }
}
