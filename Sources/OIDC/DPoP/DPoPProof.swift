import Crypto
import Foundation

/// A verified DPoP proof (RFC 9449 §4): the key it was signed with and the claims the
/// caller still has to act on (`jti` for the replay cache, `jkt` for the binding).
public struct DPoPProof: Sendable, Equatable {
    /// The public key from the proof's header.
    public let key: JWK
    /// The key's RFC 7638 SHA-256 thumbprint: the `jkt` tokens are bound to (§6.1).
    public let thumbprint: String
    /// The proof's `alg`: a resource that learns the token's client only from the token checks
    /// it against that client's algorithms (`OAuthClient.signingAlgorithms`).
    public let algorithm: JWSAlgorithm
    public let jwtID: String
    public let issuedAt: Date
    /// The nonce the proof carried, if any.
    public let nonce: String?
}

/// What a proof must match: the request it came with.
public struct DPoPRequest: Sendable {
    /// The request's method, e.g. `POST`.
    public var method: String
    /// The endpoint's URI as this server publishes it (issuer-based), e.g. `https://id.example/token`.
    public var uri: String
    /// The access token presented with the proof, at a resource (§7): `ath` must be its hash.
    public var accessToken: String?
    /// The server's nonces, when it requires one (§8); nil when none is required.
    public var nonces: DPoPNonce?
    /// Keys of earlier proofs, already checked; nil converts the key every time.
    public var keys: DPoPKeyCache?
    /// The algorithms the requester's proofs may use, when it is known and narrower than
    /// `DPoPProofVerifier.algorithms` (a FAPI 2.0 client's, `OAuthClient.signingAlgorithms`).
    public var algorithms: Set<JWSAlgorithm>?

    public init(
        method: String, uri: String, accessToken: String? = nil, nonces: DPoPNonce? = nil,
        keys: DPoPKeyCache? = nil, algorithms: Set<JWSAlgorithm>? = nil
    ) {
        self.method = method
        self.uri = uri
        self.accessToken = accessToken
        self.nonces = nonces
        self.keys = keys
        self.algorithms = algorithms
    }
}

/// Checks a DPoP proof in the order of RFC 9449 §4.3. Pure: the clock comes in, and the
/// replay cache (§11.1) is the caller's, fed with `DPoPProof.jwtID`.
public enum DPoPProofVerifier {
    /// The algorithms a proof may use (all asymmetric, §4.2 `alg`).
    public static let algorithms: [JWSAlgorithm] = [.ES256, .EdDSA, .RS256, .PS256]
    /// How old a proof may be: long enough for a slow network, short enough that the replay
    /// cache stays small (§11.1).
    public static let maximumAge: TimeInterval = 60
    /// How far in the future `iat` may be, for clocks slightly ahead of ours.
    public static let maximumSkew: TimeInterval = 5
    /// The longest `jti` kept in the replay cache.
    public static let maximumIdentifierLength = 128
    /// The longest proof read at all (a 4096-bit RSA key and its signature fit easily).
    public static let maximumLength = 8_192

    /// Private JWK members (RFC 7518 §6.2.2, §6.3.2, §6.4): a proof's key must be public.
    static let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// Verifies the proof among `headerValues` (every `DPoP` header of the request).
    /// - Returns: nil when the request carries no `DPoP` header.
    public static func verify(headerValues: [String], request: DPoPRequest, now: Date) throws(DPoPError)
        -> DPoPProof?
    {
        // Step 1: at most one DPoP header.
        guard headerValues.count <= 1 else { throw .multipleHeaders }
        guard let compact = headerValues.first else { return nil }
        return try verify(compact, request: request, now: now)
    }

    /// Verifies one proof (RFC 9449 §4.3 steps 2–12).
    public static func verify(_ compact: String, request: DPoPRequest, now: Date) throws(DPoPError)
        -> DPoPProof
    {
        // Step 2: a single well-formed JWS.
        // Split on the bytes: a proof is ASCII, and `Character` splitting costs more than the
        // rest of the parsing.
        let bytes = Array(compact.utf8)
        guard bytes.count <= maximumLength else { throw .malformed }
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else { throw .malformed }
        func part(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        guard let payloadBytes = try? Base64URL.decode(part((dots[0] + 1)..<dots[1])),
            let signature = try? Base64URL.decode(part((dots[1] + 1)..<bytes.count)),
            let claims = object(payloadBytes)
        else { throw .malformed }
        // Steps 4, 5 and 7: the header, checked once per distinct header when a cache is given
        // (a client sends the same header, its key, with every proof).
        let header = part(0..<dots[0])
        let checked: DPoPKeyCache.Entry
        if let cache = request.keys {
            checked = try cache.entry(forHeader: header) { () throws(DPoPError) in try checkHeader(header) }
        } else {
            checked = try checkHeader(header)
        }
        let key = checked.key
        let algorithm = checked.algorithm
        if let allowed = request.algorithms, !allowed.contains(algorithm) { throw .algorithmNotAllowed }
        // Step 6: the signature over the signing input as received.
        let signingInput = Array(bytes[0..<dots[1]])
        guard key.isValidSignature(signature, for: signingInput, algorithm: algorithm) else {
            throw .signatureInvalid
        }

        // Step 3: the required claims.
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty else { throw .missingClaim("jti") }
        guard jti.utf8.count <= maximumIdentifierLength else { throw .identifierTooLong }
        guard let htm = claims["htm"]?.stringValue else { throw .missingClaim("htm") }
        guard let htu = claims["htu"]?.stringValue else { throw .missingClaim("htu") }
        let iat: Double
        switch claims["iat"] {
        case .int(let seconds)?: iat = Double(seconds)
        case .double(let seconds)?: iat = seconds
        default: throw .missingClaim("iat")
        }
        // Step 8: the method (case-sensitive, RFC 9110 §9.1).
        guard htm == request.method else { throw .methodMismatch }
        // Step 9: the URI, normalised, without query and fragment.
        guard DPoPURI.matches(htu, expected: request.uri) else { throw .uriMismatch }
        // Step 10: the nonce, when the server requires one.
        let nonce = claims["nonce"]?.stringValue
        if let nonces = request.nonces {
            guard let nonce, nonces.isValid(nonce, now: now) else { throw .nonceRequired }
        }
        // Step 11: created recently.
        let issuedAt = Date(timeIntervalSince1970: iat)
        let age = now.timeIntervalSince(issuedAt)
        guard age <= maximumAge, age >= -maximumSkew else { throw .staleOrFuture }
        // Step 12: at a resource, bound to the access token presented with it.
        if let accessToken = request.accessToken {
            guard let ath = claims["ath"]?.stringValue,
                constantTimeEquals(Array(ath.utf8), Array(accessTokenHash(accessToken).utf8))
            else { throw .accessTokenHashMismatch }
        }
        return DPoPProof(
            key: checked.jwk, thumbprint: checked.thumbprint, algorithm: algorithm, jwtID: jti,
            issuedAt: issuedAt, nonce: nonce)
    }

    /// The protected header (its base64url text): a JSON object without `crit`, `typ`
    /// `dpop+jwt` (step 4), a supported asymmetric `alg` (step 5), and a `jwk` that is a public
    /// key (step 7) fitting the `alg`.
    static func checkHeader(_ segment: String) throws(DPoPError) -> DPoPKeyCache.Entry {
        guard let bytes = try? Base64URL.decode(segment), let header = object(bytes) else { throw .malformed }
        guard header["crit"] == nil else { throw .malformed }
        // Step 4: `typ` is dpop+jwt (exactly; a media type prefix is not allowed by §4.2).
        guard let type = header["typ"]?.stringValue, type.lowercased() == "dpop+jwt" else { throw .wrongType }
        // Step 5: an asymmetric algorithm this server supports.
        guard let name = header["alg"]?.stringValue, let algorithm = JWSAlgorithm(rawValue: name),
            algorithms.contains(algorithm)
        else { throw .unsupportedAlgorithm }
        // Step 7 (before the key is used): the `jwk` is a public key.
        guard let members = header["jwk"]?.objectValue else { throw .invalidKey }
        guard members.keys.allSatisfy({ !privateMembers.contains($0) }) else { throw .privateKey }
        let jwk = try publicJWK(members)
        guard let key = try? jwk.publicKey(), key.fits(algorithm), let thumbprint = try? jwk.thumbprint()
        else {
            throw .invalidKey
        }
        return DPoPKeyCache.Entry(algorithm: algorithm, jwk: jwk, key: key, thumbprint: thumbprint)
    }

    /// `ath` (§4.2): base64url of the SHA-256 of the access token's ASCII.
    public static func accessTokenHash(_ accessToken: String) -> String {
        Base64URL.encode(SHA256.hash(data: Array(accessToken.utf8)).bytes)
    }

    private static func object(_ bytes: [UInt8]) -> [String: JSONValue]? { ProofJSON.object(bytes) }

    /// The public members of the header's key; anything but strings is malformed.
    private static func publicJWK(_ members: [String: JSONValue]) throws(DPoPError) -> JWK {
        func string(_ name: String) throws(DPoPError) -> String? {
            guard let value = members[name] else { return nil }
            guard let text = value.stringValue else { throw .invalidKey }
            return text
        }
        guard let kty = try string("kty") else { throw .invalidKey }
        return JWK(
            kty: kty, crv: try string("crv"), x: try string("x"), y: try string("y"), n: try string("n"),
            e: try string("e"))
    }
}
