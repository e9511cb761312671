import Crypto
import Foundation

/// Decodes a saved response into readable form without verifying anything: what the
/// client data says, which flags are set, which authenticator model and key, which
/// attestation certificates. For support and debugging.
public enum ResponseInspection {
    /// Accepts a bare `RegistrationResponseJSON` / `AuthenticationResponseJSON` or an
    /// `OfflineVerificationDocument` (its `response` is inspected).
    ///
    /// - Returns: exit code 0 and the decoded form as pretty JSON with sorted keys, or 2
    ///   and `{"error": …}` when the input cannot be decoded.
    public static func inspect(document bytes: [UInt8]) -> (exitCode: Int32, output: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            return ToolOutput.unusable("input is not a JSON object")
        }
        let responseObject = (object["ceremony"] != nil ? object["response"] : object) as? [String: Any]
        guard let responseObject, let inner = responseObject["response"] as? [String: Any],
            let data = try? JSONSerialization.data(withJSONObject: responseObject)
        else { return ToolOutput.unusable("no response object with a response member") }
        do {
            if inner["attestationObject"] != nil {
                let response = try JSONDecoder().decode(RegistrationResponseJSON.self, from: data)
                return (0, ToolOutput.json(try registration(response)))
            }
            if inner["authenticatorData"] != nil {
                let response = try JSONDecoder().decode(AuthenticationResponseJSON.self, from: data)
                return (0, ToolOutput.json(try authentication(response)))
            }
            return ToolOutput.unusable("response has neither attestationObject nor authenticatorData")
        } catch let error as WebAuthnError {
            return ToolOutput.unusable("response could not be decoded: \(error)")
        } catch {
            return ToolOutput.unusable(
                "response could not be decoded: \(OfflineVerification.describe(error))")
        }
    }

    static func registration(_ response: RegistrationResponseJSON) throws -> [String: Any] {
        var output: [String: Any] = [
            "kind": "registration",
            "id": response.id,
            "client_data": try clientData(response.response.clientDataJSON),
        ]
        if let transports = response.response.transports { output["transports"] = transports }
        if let attachment = response.authenticatorAttachment { output["authenticator_attachment"] = attachment }
        let objectBytes = try decodeBase64URL(response.response.attestationObject, field: "response.attestationObject")
        let object = try ParsedAttestationObject(from: objectBytes)
        output["authenticator_data"] = authenticatorData(object.authenticatorData)
        var attestation: [String: Any] = [
            "format": object.format,
            "statement_members": (object.statement.mapValue ?? []).compactMap { $0.key.stringValue }.sorted(),
        ]
        if let alg = object.statement[textKey: "alg"]?.intValue {
            attestation["alg"] = alg
            attestation["alg_name"] = COSEAlgorithmIdentifier(rawValue: alg).description
        }
        if let x5c = object.statement[textKey: "x5c"]?.arrayValue {
            attestation["certificates"] = x5c.map { item -> [String: Any] in
                guard let der = item.bytesValue, let certificate = try? Certificate(derRepresentation: der) else {
                    return ["error": "not a certificate"]
                }
                return [
                    "subject": certificate.subject.description, "issuer": certificate.issuer.description,
                    "not_before": ToolOutput.iso8601(certificate.notValidBefore),
                    "not_after": ToolOutput.iso8601(certificate.notValidAfter),
                ]
            }
        }
        output["attestation"] = attestation
        return output
    }

    static func authentication(_ response: AuthenticationResponseJSON) throws -> [String: Any] {
        let authData = try ParsedAuthenticatorData(
            from: decodeBase64URL(response.response.authenticatorData, field: "response.authenticatorData"))
        let signature = try decodeBase64URL(response.response.signature, field: "response.signature")
        var output: [String: Any] = [
            "kind": "authentication",
            "id": response.id,
            "client_data": try clientData(response.response.clientDataJSON),
            "authenticator_data": authenticatorData(authData),
            "signature_length": signature.count,
        ]
        if let handle = response.response.userHandle { output["user_handle"] = handle }
        return output
    }

    static func clientData(_ encoded: String) throws -> [String: Any] {
        let data = try CollectedClientData(from: decodeBase64URL(encoded, field: "response.clientDataJSON"))
        var output: [String: Any] = ["type": data.type, "challenge": data.challenge, "origin": data.origin]
        if let crossOrigin = data.crossOrigin { output["crossOrigin"] = crossOrigin }
        if let topOrigin = data.topOrigin { output["topOrigin"] = topOrigin }
        return output
    }

    static func authenticatorData(_ data: ParsedAuthenticatorData) -> [String: Any] {
        var output: [String: Any] = [
            "rp_id_hash": Hex.encode(data.rpIDHash),
            "flags": ToolOutput.flagNames(data.flags),
            "sign_count": Int(data.signCount),
        ]
        if let attested = data.attestedCredentialData {
            output["aaguid"] = ToolOutput.uuid(attested.aaguid)
            output["credential_id"] = Base64URL.encode(attested.credentialID)
            var key: [String: Any] = [:]
            if let kty = attested.credentialPublicKey[intKey: 1]?.intValue { key["kty"] = kty }
            if let alg = attested.credentialPublicKey[intKey: 3]?.intValue {
                key["algorithm"] = alg
                key["algorithm_name"] = COSEAlgorithmIdentifier(rawValue: alg).description
            }
            if let decoded = try? COSEKey(cbor: attested.credentialPublicKey) {
                key["key_type"] = ToolOutput.keyDescription(decoded)
            } else {
                key["key_type"] = "unsupported"
            }
            output["credential_public_key"] = key
        }
        if data.extensions != nil { output["has_extensions"] = true }
        return output
    }
}
