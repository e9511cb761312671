import Testing
import WebAuthnCore
@testable import WebAuthnTestSupport

@Suite struct ParsedAuthenticatorDataTests {
    @Test func parsesAssertionData() throws {
        let bytes = AuthenticatorDataBuilder().flags([.userPresent, .userVerified, .backupEligible, .backedUp])
            .signCount(0x0102_0304).build()
        let data = try ParsedAuthenticatorData(from: bytes)
        #expect(data.rpIDHash == [UInt8](repeating: 0xAB, count: 32))
        #expect(data.flags == [.userPresent, .userVerified, .backupEligible, .backedUp])
        #expect(data.signCount == 0x0102_0304)
        #expect(data.attestedCredentialData == nil)
        #expect(data.extensions == nil)
        #expect(data.rawBytes == bytes)
    }

    @Test func parsesAttestedCredentialDataAndExtensions() throws {
        let extensions = CBOREncoder.encode(.map([CBORMapEntry(.textString("credProtect"), .int(2))]))
        let bytes = AuthenticatorDataBuilder().aaguid(Array(1...16))
            .attestedCredential(id: [9, 8, 7], publicKey: sampleEC2Key).extensions(extensions).build()
        let data = try ParsedAuthenticatorData(from: bytes)
        let attested = try #require(data.attestedCredentialData)
        #expect(attested.aaguid == Array(1...16))
        #expect(attested.credentialID == [9, 8, 7])
        #expect(attested.credentialPublicKeyBytes == sampleEC2Key)
        #expect(data.extensions?[textKey: "credProtect"] == .int(2))
    }

    @Test func acceptsLongestCredentialID() throws {
        let id = [UInt8](repeating: 7, count: 1023)
        let bytes = AuthenticatorDataBuilder().attestedCredential(id: id, publicKey: sampleEC2Key).build()
        #expect(try ParsedAuthenticatorData(from: bytes).attestedCredentialData?.credentialID == id)
    }

    @Test func rejectsCredentialIDOver1023Bytes() {
        let bytes = AuthenticatorDataBuilder()
            .attestedCredential(id: [UInt8](repeating: 7, count: 1024), publicKey: sampleEC2Key).build()
        #expect(throws: WebAuthnError.credentialIDTooLong) { try ParsedAuthenticatorData(from: bytes) }
    }

    @Test func rejectsShortData() {
        let bytes = Array(AuthenticatorDataBuilder().build().prefix(36))
        #expect(throws: WebAuthnError.malformedAuthenticatorData) { try ParsedAuthenticatorData(from: bytes) }
        #expect(throws: WebAuthnError.malformedAuthenticatorData) { try ParsedAuthenticatorData(from: []) }
    }

    @Test func rejectsTrailingBytes() {
        let plain = AuthenticatorDataBuilder().trailing([0]).build()
        #expect(throws: WebAuthnError.malformedAuthenticatorData) { try ParsedAuthenticatorData(from: plain) }
        let attested = AuthenticatorDataBuilder().attestedCredential(id: [1], publicKey: sampleEC2Key)
            .trailing([0xA0]).build()
        #expect(throws: WebAuthnError.malformedAuthenticatorData) { try ParsedAuthenticatorData(from: attested) }
    }

    @Test func rejectsTruncatedAttestedCredentialData() {
        let full = AuthenticatorDataBuilder().attestedCredential(id: [1, 2, 3], publicKey: sampleEC2Key).build()
        // Cut inside the AAGUID, inside the credential id, and inside the key.
        for cut in [40, 37 + 18 + 2, full.count - 1] {
            #expect(throws: WebAuthnError.self) { try ParsedAuthenticatorData(from: Array(full.prefix(cut))) }
        }
        #expect(throws: WebAuthnError.malformedAuthenticatorData) {
            try ParsedAuthenticatorData(from: Array(full.prefix(40)))
        }
        #expect(throws: WebAuthnError.malformedCBOR(.lengthTooLarge)) {
            try ParsedAuthenticatorData(from: Array(full.prefix(full.count - 1)))
        }
    }

    @Test func rejectsFlagsWithoutTheirData() {
        // AT set, nothing after the sign count.
        let at = AuthenticatorDataBuilder().flags([.userPresent, .attestedCredentialData]).build()
        #expect(throws: WebAuthnError.malformedAuthenticatorData) { try ParsedAuthenticatorData(from: at) }
        // ED set, nothing after the sign count.
        let ed = AuthenticatorDataBuilder().flags([.userPresent, .extensionData]).build()
        #expect(throws: WebAuthnError.malformedCBOR(.truncated)) { try ParsedAuthenticatorData(from: ed) }
        // ED set but the extensions are not a map.
        let notMap = AuthenticatorDataBuilder().extensions([0x01]).build()
        #expect(throws: WebAuthnError.malformedAuthenticatorData) { try ParsedAuthenticatorData(from: notMap) }
    }

    @Test func rejectsNonMapCredentialKey() {
        let bytes = AuthenticatorDataBuilder().attestedCredential(id: [1], publicKey: [0x01]).build()
        #expect(throws: WebAuthnError.invalidCredentialPublicKey) { try ParsedAuthenticatorData(from: bytes) }
    }
}
