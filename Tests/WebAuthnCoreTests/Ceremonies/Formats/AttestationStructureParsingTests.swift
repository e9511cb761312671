import Crypto
import Foundation
import Testing
@testable import WebAuthnCore

/// The binary structures inside attestation statements: Android's KeyDescription and the
/// TPM's TPMT_PUBLIC / TPMS_ATTEST.
@Suite struct AttestationStructureParsingTests {
    /// DER TLV with a short or one-byte long length.
    func tlv(_ tag: [UInt8], _ body: [UInt8]) -> [UInt8] {
        tag + (body.count < 0x80 ? [UInt8(body.count)] : [0x81, UInt8(body.count)]) + body
    }

    func keyDescription(software: [UInt8], tee: [UInt8], challenge: [UInt8]) -> [UInt8] {
        tlv([0x30], tlv([0x02], [3]) + tlv([0x0A], [1]) + tlv([0x02], [4]) + tlv([0x0A], [1])
            + tlv([0x04], challenge) + tlv([0x04], []) + tlv([0x30], software) + tlv([0x30], tee))
    }

    @Test func keyDescriptionFields() throws {
        let challenge = [UInt8](repeating: 7, count: 32)
        let purpose = tlv([0xA1], tlv([0x31], tlv([0x02], [2]) + tlv([0x02], [3])))
        let allApplications = tlv([0xBF, 0x84, 0x58], tlv([0x05], []))  // [600]
        let origin = tlv([0xBF, 0x85, 0x3E], tlv([0x02], [0]))  // [702]
        let unknown = tlv([0xBF, 0x85, 0x3F], tlv([0x02], [1]))  // [703] is skipped
        let description = try AndroidKeyAttestation.KeyDescription(
            keyDescription(software: allApplications, tee: purpose + origin + unknown, challenge: challenge))
        #expect(description.attestationChallenge == challenge)
        #expect(description.softwareEnforced.allApplications)
        #expect(!description.teeEnforced.allApplications)
        #expect(description.teeEnforced.purposes == [2, 3])
        #expect(description.teeEnforced.origin == 0)
        #expect(description.softwareEnforced.origin == nil)
    }

    @Test func keyDescriptionRefusesMalformedInput() throws {
        let valid = keyDescription(software: [], tee: [], challenge: [1])
        #expect(throws: DERError.self) { try AndroidKeyAttestation.KeyDescription(valid + [0]) }
        for length in 0..<valid.count {
            #expect(throws: DERError.self) { try AndroidKeyAttestation.KeyDescription(Array(valid.prefix(length))) }
        }
        // A universal element where an explicit tag is expected.
        #expect(throws: DERError.self) {
            try AndroidKeyAttestation.KeyDescription(keyDescription(software: tlv([0x02], [1]), tee: [], challenge: [1]))
        }
    }

    func tpmStatement() throws -> (pubArea: [UInt8], certInfo: [UInt8]) {
        let vector = try #require(AttestationVectors.all.first { $0.format == "tpm" })
        let object = try CBORDecoder().decode(Base64URL.decode(vector.response.response.attestationObject))
        let statement = try #require(object[textKey: "attStmt"])
        return (
            try #require(statement[textKey: "pubArea"]?.bytesValue), try #require(statement[textKey: "certInfo"]?.bytesValue)
        )
    }

    @Test func tpmStructuresOfCapturedStatement() throws {
        let (pubAreaBytes, certInfoBytes) = try tpmStatement()
        let pubArea = try TPMPublicArea(pubAreaBytes)
        #expect(pubArea.nameAlg == 0x000B)
        guard case .rsa(let modulus, let exponent) = pubArea.key else {
            Issue.record("expected an RSA pubArea")
            return
        }
        #expect(modulus.count == 256)
        #expect(exponent == 0)  // the TPM's encoding of 65537
        #expect(pubArea.matches(.rsa(n: modulus, e: [1, 0, 1], algorithm: .rs256)))
        #expect(!pubArea.matches(.rsa(n: modulus, e: [3], algorithm: .rs256)))
        let certInfo = try TPMCertifyInfo(certInfoBytes)
        #expect(certInfo.magic == TPMCertifyInfo.generatedValue)
        #expect(certInfo.type == TPMCertifyInfo.attestCertify)
        #expect(certInfo.attestedName == TPMAttestation.name(of: pubAreaBytes, nameAlg: pubArea.nameAlg))
        #expect(certInfo.extraData.count == 20)  // SHA-1, as the statement's alg is RS1
    }

    @Test func tpmStructuresRefuseTruncationAndTrailingBytes() throws {
        let (pubArea, certInfo) = try tpmStatement()
        #expect(throws: TPMReader.Truncated.self) { try TPMPublicArea(pubArea + [0]) }
        #expect(throws: TPMReader.Truncated.self) { try TPMCertifyInfo(certInfo + [0]) }
        for length in stride(from: 0, to: pubArea.count, by: 5) {
            #expect(throws: TPMReader.Truncated.self) { try TPMPublicArea(Array(pubArea.prefix(length))) }
        }
        for length in stride(from: 0, to: certInfo.count, by: 5) {
            #expect(throws: TPMReader.Truncated.self) { try TPMCertifyInfo(Array(certInfo.prefix(length))) }
        }
        #expect(TPMAttestation.name(of: pubArea, nameAlg: 0x0099) == nil)
    }
}
