import Crypto
import Foundation

/// The protected header of a verified JWS.
public struct JWSHeader: Sendable, Equatable {
    public let algorithm: JWSAlgorithm
    public let keyID: String?
    /// `typ`, e.g. `JWT`, `at+jwt`, `logout+jwt`.
    public let type: String?
    /// `cty`.
    public let contentType: String?
}

/// A JWS whose signature has been verified. Only now is the payload handed out.
public struct VerifiedJWS: Sendable {
    public let header: JWSHeader
    public let payload: [UInt8]
    /// The key that verified the signature.
    public let key: JWK

    /// Whether the header's `typ` is `expected`, compared as `JWSVerifier.verify(_:expectedType:)`
    /// compares it.
    public func hasType(_ expected: String) -> Bool {
        header.type.map { JWSVerifier.normalisedType($0) == JWSVerifier.normalisedType(expected) } ?? false
    }

    /// Decodes the payload as JSON.
    public func decodePayload<T: Decodable>(as type: T.Type) throws(JOSEError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(payload))
        } catch {
            throw .malformed
        }
    }
}

/// Verifies compact JWS objects against a key set and an allow-list of algorithms.
///
/// The order is fixed (RFC 7515 §5.2 plus RFC 8725 hardening): split into exactly three
/// base64url parts; decode the header; the `alg` must be allowed; find the key (by `kid`,
/// or the single key of the right type when there is no `kid`); the key type must fit
/// the `alg`; verify the signature; only then is the payload returned. Keys embedded in
/// the header (`jwk`, `jku`, `x5u`, `x5c`) are never used.
public struct JWSVerifier: Sendable {
    public let keys: JWKS
    public let allowedAlgorithms: Set<JWSAlgorithm>
    /// Each JWK converted once, in the order of `keys.keys`; a key that cannot be
    /// converted only fails the tokens that select it.
    private let converted: [Result<SigningPublicKey, JOSEError>]

    public init(keys: JWKS, allowedAlgorithms: Set<JWSAlgorithm>) {
        self.keys = keys
        self.allowedAlgorithms = allowedAlgorithms
        self.converted = keys.keys.map { jwk in Result { () throws(JOSEError) in try jwk.publicKey() } }
    }

    /// Verifies `compact`. With `expectedType`, the header's `typ` must match it
    /// (case-insensitively, with or without the `application/` prefix, RFC 7515 §4.1.9),
    /// which keeps one kind of token from being accepted as another (RFC 8725 §3.11).
    public func verify(_ compact: String, expectedType: String? = nil) throws(JOSEError) -> VerifiedJWS {
        // Step 1: three parts, each valid base64url. An empty signature (as `alg: none`
        // produces) passes this step so the algorithm check reports it precisely.
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty else { throw .malformed }
        guard let headerBytes = try? Base64URL.decode(String(parts[0])),
            let payload = try? Base64URL.decode(String(parts[1])),
            let signature = try? Base64URL.decode(String(parts[2]))
        else { throw .malformed }

        // Step 2: the header is a JSON object with a string `alg`.
        let header = try Self.parseHeader(headerBytes)

        // Step 3: only allowed, supported algorithms.
        guard let algorithm = JWSAlgorithm(rawValue: header.alg), allowedAlgorithms.contains(algorithm) else {
            throw .unsupportedAlgorithm(header.alg)
        }

        // Step 4: the key.
        let index = try selectKey(keyID: header.kid, algorithm: algorithm)
        let jwk = keys.keys[index]
        let publicKey = try converted[index].get()
        guard publicKey.fits(algorithm) else { throw .algorithmKeyMismatch }

        // Step 5: the signature over the signing input exactly as received.
        let signingInput = Array(compact.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard publicKey.isValidSignature(signature, for: signingInput, algorithm: algorithm) else {
            throw .signatureInvalid
        }

        if let expectedType {
            guard let type = header.typ, Self.normalisedType(type) == Self.normalisedType(expectedType) else {
                throw .typeMismatch
            }
        }

        return VerifiedJWS(
            header: JWSHeader(algorithm: algorithm, keyID: header.kid, type: header.typ, contentType: header.cty),
            payload: payload, key: jwk)
    }

    /// The index of the key to use.
    private func selectKey(keyID: String?, algorithm: JWSAlgorithm) throws(JOSEError) -> Int {
        if let keyID {
            guard let index = keys.keys.firstIndex(where: { $0.kid == keyID }) else { throw .unknownKeyID }
            guard Self.fits(keys.keys[index], algorithm) else { throw .algorithmKeyMismatch }
            return index
        }
        let candidates = keys.keys.indices.filter { Self.fits(keys.keys[$0], algorithm) }
        guard candidates.count == 1, let only = candidates.first else { throw .unknownKeyID }
        return only
    }

    /// Key type, curve, `use` and `alg` of the JWK all fit the algorithm.
    private static func fits(_ jwk: JWK, _ algorithm: JWSAlgorithm) -> Bool {
        jwk.kty == algorithm.keyType && (algorithm.curve == nil || jwk.crv == algorithm.curve)
            && (jwk.use == nil || jwk.use == "sig") && (jwk.alg == nil || jwk.alg == algorithm.rawValue)
    }

    static func normalisedType(_ type: String) -> String {
        let lower = type.lowercased()
        return lower.hasPrefix("application/") ? String(lower.dropFirst("application/".count)) : lower
    }

    private struct RawHeader {
        var alg: String
        var kid: String?
        var typ: String?
        var cty: String?
    }

    private static func parseHeader(_ bytes: [UInt8]) throws(JOSEError) -> RawHeader {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)),
            let fields = object as? [String: Any]
        else { throw .malformed }
        guard fields["crit"] == nil else { throw .unsupportedCriticalHeader }
        guard let alg = fields["alg"] as? String else { throw .malformed }
        func optionalString(_ name: String) throws(JOSEError) -> String? {
            guard let value = fields[name] else { return nil }
            guard let text = value as? String else { throw .malformed }
            return text
        }
        return RawHeader(alg: alg, kid: try optionalString("kid"), typ: try optionalString("typ"), cty: try optionalString("cty"))
    }
}
