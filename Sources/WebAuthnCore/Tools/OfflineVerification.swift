import Crypto
import Foundation

/// Runs a registration or authentication ceremony on a saved response, offline, for
/// support and debugging: "why was this passkey refused?". Pure: the document holds
/// everything, including the time certificates are checked at.
public enum OfflineVerification {
    /// Verifies the document (`OfflineVerificationDocument` as JSON bytes).
    ///
    /// - Returns: exit code 0 and the verified result, 1 and
    ///   `{"verified": false, "step": …, "reason": …}` when verification fails, or 2 and
    ///   `{"error": …}` when the document itself is unusable. Output is pretty JSON with
    ///   sorted keys.
    public static func run(document bytes: [UInt8]) -> (exitCode: Int32, output: String) {
        let document: OfflineVerificationDocument
        do {
            document = try JSONDecoder().decode(OfflineVerificationDocument.self, from: Data(bytes))
        } catch {
            return ToolOutput.unusable("document is not a usable verification document: \(describe(error))")
        }
        guard let challenge = try? Base64URL.decode(document.expectedChallenge) else {
            return ToolOutput.unusable("expected_challenge is not base64url")
        }
        guard !document.origins.isEmpty else { return ToolOutput.unusable("origins is empty") }
        var now: Date?
        if let text = document.now {
            guard let date = ISO8601DateFormatter().date(from: text) else {
                return ToolOutput.unusable("now is not an RFC 3339 time such as 2025-01-08T00:00:00Z")
            }
            now = date
        }
        switch document.response {
        case .registration(let response):
            var anchors: [Certificate] = []
            for pem in document.trustAnchors ?? [] {
                guard let certificate = try? Certificate(pemRepresentation: pem) else {
                    return ToolOutput.unusable("trust_anchors holds text that is not a PEM certificate")
                }
                anchors.append(certificate)
            }
            let byFormat = anchors.isEmpty ? [:] : Dictionary(uniqueKeysWithValues: AttestationFormat.allCases.map { ($0, anchors) })
            let verifier = RegistrationVerifier(
                rpID: document.rpID, allowedOrigins: Set(document.origins),
                allowedAlgorithms: document.allowedAlgorithms.map { $0.map(COSEAlgorithmIdentifier.init(rawValue:)) }
                    ?? [.es256, .rs256, .eddsa, .ps256],
                trustAnchors: AttestationTrustAnchors(byFormat: byFormat), now: now)
            do {
                let result = try verifier.verify(
                    response, expectedChallenge: challenge, requireUserPresence: document.requireUserPresence,
                    requireUserVerification: document.requireUserVerification)
                return (0, ToolOutput.json(registrationOutput(result)))
            } catch {
                return failure(error)
            }
        case .authentication(let response):
            guard let keyText = document.credentialPublicKey else {
                return ToolOutput.unusable("credential_public_key is required for an authentication")
            }
            guard let key = try? Base64URL.decode(keyText) else {
                return ToolOutput.unusable("credential_public_key is not base64url")
            }
            guard let id = try? Base64URL.decode(response.rawId) else {
                return failure(.invalidBase64URL(field: "rawId"))
            }
            var userHandle: [UInt8]?
            if let text = document.userHandle {
                guard let decoded = try? Base64URL.decode(text) else {
                    return ToolOutput.unusable("user_handle is not base64url")
                }
                userHandle = decoded
            }
            // Without a stored BE/BS, take them from the assertion: an offline check has no record.
            let flags = (try? Base64URL.decode(response.response.authenticatorData))
                .flatMap { $0.count > 32 ? AuthenticatorFlags(rawValue: $0[32]) : nil } ?? []
            let stored = StoredCredential(
                id: id, publicKey: key, signCount: document.signCount ?? 0,
                backupEligible: document.backupEligible ?? flags.contains(.backupEligible),
                backedUp: document.backedUp ?? flags.contains(.backedUp), userHandle: userHandle)
            let verifier = AuthenticationVerifier(rpID: document.rpID, allowedOrigins: Set(document.origins))
            do {
                let result = try verifier.verify(
                    response, expectedChallenge: challenge, credential: stored,
                    requireUserVerification: document.requireUserVerification)
                return (0, ToolOutput.json(authenticationOutput(result)))
            } catch {
                return failure(error)
            }
        }
    }

    static func failure(_ error: WebAuthnError) -> (exitCode: Int32, output: String) {
        (1, ToolOutput.json(["verified": false, "step": ToolOutput.step(error), "reason": error.description]))
    }

    static func registrationOutput(_ result: VerifiedRegistration) -> [String: Any] {
        var attestation: [String: Any] = ["format": result.attestationFormat]
        switch result.attestationTrust {
        case .none:
            attestation["trust"] = "none"
        case .selfAttestation:
            attestation["trust"] = "self"
        case .basic(let chain, let verification):
            attestation["trust"] = "basic"
            attestation["chain"] = verification == .verifiedAgainstRoot ? "verified_against_root" : "unverified"
            attestation["certificate_subjects"] = chain.map {
                (try? Certificate(derRepresentation: $0)).map { $0.subject.description } ?? "unparsable"
            }
        }
        var output: [String: Any] = [
            "verified": true,
            "ceremony": "registration",
            "credential_id": Base64URL.encode(result.credentialID),
            "public_key": Base64URL.encode(result.publicKey),
            "algorithm": result.algorithm.rawValue,
            "algorithm_name": result.algorithm.description,
            "sign_count": Int(result.signCount),
            "aaguid": ToolOutput.uuid(result.aaguid),
            "flags": [
                "user_present": result.userPresent, "user_verified": result.userVerified,
                "backup_eligible": result.backupEligible, "backed_up": result.backedUp,
            ],
            "transports": result.transports,
            "attestation": attestation,
        ]
        if let key = try? COSEKey(cbor: result.publicKey) { output["key_type"] = ToolOutput.keyDescription(key) }
        return output
    }

    static func authenticationOutput(_ result: VerifiedAuthentication) -> [String: Any] {
        [
            "verified": true,
            "ceremony": "authentication",
            "credential_id": Base64URL.encode(result.credentialID),
            "new_sign_count": Int(result.newSignCount),
            "user_verified": result.userVerified,
            "backed_up": result.backedUp,
            "backup_state_changed": result.backupStateChanged,
            "possible_clone": result.possibleClone,
        ]
    }

    /// A short, input-free description of a decoding error (the member path, not values).
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "not JSON" }
        func path(_ context: DecodingError.Context) -> String {
            let text = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return text.isEmpty ? "document" : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return "missing \(parent == "document" ? key.stringValue : parent + "." + key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "wrong type at \(path(context))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not JSON" : "invalid value at \(path(context))"
        @unknown default: return "not JSON"
        }
    }
}
