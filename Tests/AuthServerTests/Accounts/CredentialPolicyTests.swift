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

    /// A linked upstream identity is a way in: the last passkey or the password may go while
    /// one is linked, and the last identity may go only while a passkey or the password stays.
    @Test func aLinkedIdentityIsAWayIn() {
        #expect(CredentialPolicy.removePasskey(passkeys: 1, hasPassword: false, identities: 1) == .allowed)
        #expect(
            CredentialPolicy.removePasskey(passkeys: 1, hasPassword: false, identities: 0) == .lastCredential)
        #expect(CredentialPolicy.removePassword(hasUsedPasskey: false, identities: 1) == .allowed)
        #expect(CredentialPolicy.removePassword(hasUsedPasskey: false, identities: 0) == .passkeyNeverUsed)
        #expect(
            CredentialPolicy.unlinkIdentity(identities: 1, passkeys: 0, hasPassword: false) == .lastCredential
        )
        #expect(CredentialPolicy.unlinkIdentity(identities: 2, passkeys: 0, hasPassword: false) == .allowed)
        #expect(CredentialPolicy.unlinkIdentity(identities: 1, passkeys: 1, hasPassword: false) == .allowed)
        #expect(CredentialPolicy.unlinkIdentity(identities: 1, passkeys: 0, hasPassword: true) == .allowed)
    }
}
