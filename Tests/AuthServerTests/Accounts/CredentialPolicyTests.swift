import Testing

@testable import AuthServer

@Suite("Credential policy: an account keeps a way to sign in")
struct CredentialPolicyTests {
    @Test func theLastPasskeyOfAPasswordlessAccountStays() {
        #expect(CredentialPolicy.removePasskey(passkeys: 1, hasPassword: false) == .lastCredential)
        // No passkey left to count (an unknown id): still nothing to fall back on.
        #expect(CredentialPolicy.removePasskey(passkeys: 0, hasPassword: false) == .lastCredential)
    }

    @Test func aPasskeyGoesWhenAnotherWayInRemains() {
        #expect(CredentialPolicy.removePasskey(passkeys: 2, hasPassword: false) == .allowed)
        #expect(CredentialPolicy.removePasskey(passkeys: 1, hasPassword: true) == .allowed)
        #expect(CredentialPolicy.removePasskey(passkeys: 0, hasPassword: true) == .allowed)
    }

    @Test func thePasswordGoesOnlyAfterAPasskeySignedIn() {
        #expect(CredentialPolicy.removePassword(hasUsedPasskey: false) == .passkeyNeverUsed)
        #expect(CredentialPolicy.removePassword(hasUsedPasskey: true) == .allowed)
    }

    @Test func thePageOffersRemovalOnlyOfAPasswordThatCanGo() {
        #expect(CredentialPolicy.mayRemovePassword(hasPassword: true, hasUsedPasskey: true))
        #expect(!CredentialPolicy.mayRemovePassword(hasPassword: true, hasUsedPasskey: false))
        #expect(!CredentialPolicy.mayRemovePassword(hasPassword: false, hasUsedPasskey: true))
    }
}
