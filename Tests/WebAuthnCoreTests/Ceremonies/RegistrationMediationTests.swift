import Testing
import WebAuthnCore

@Suite struct RegistrationMediationTests {
    @Test func aModalRegistrationRequiresPresenceAndVerification() {
        let mediation = RegistrationMediation(conditional: false)
        #expect(mediation == .modal)
        #expect(mediation.userVerification == .required)
        #expect(mediation.requiresUserPresence)
        #expect(mediation.requiresUserVerification)
    }

    @Test func aConditionalRegistrationAcceptsNeither() {
        let mediation = RegistrationMediation(conditional: true)
        #expect(mediation == .conditional)
        #expect(mediation.userVerification == .preferred)
        #expect(!mediation.requiresUserPresence)
        #expect(!mediation.requiresUserVerification)
    }

    @Test func theRawValuesNameTheCeremony() {
        #expect(RegistrationMediation.modal.rawValue == "modal")
        #expect(RegistrationMediation.conditional.rawValue == "conditional")
    }
}
