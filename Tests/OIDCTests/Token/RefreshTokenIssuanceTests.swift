import Foundation
import Testing

@testable import OIDC

@Suite struct RefreshTokenIssuanceTests {
    static let granted = ["openid", "profile"]
    static let offline = ["openid", "offline_access"]

    @Test func codeGrantStartsAFamilyOnlyWithOfflineAccessOrTheConfidentialClientsOptIn() {
        #expect(
            RefreshTokenIssuance.decide(grant: .authorizationCode, client: Fixture.web, scopes: Self.offline)
                == .newFamily)
        #expect(
            RefreshTokenIssuance.decide(grant: .authorizationCode, client: Fixture.web, scopes: Self.granted)
                == .notIssued)
        var optedIn = Fixture.web
        optedIn.refreshTokensWithoutOfflineAccess = true
        #expect(
            RefreshTokenIssuance.decide(grant: .authorizationCode, client: optedIn, scopes: Self.granted)
                == .newFamily)
    }

    @Test func publicClientsNeedOfflineAccessWhateverTheirSetting() {
        var native = Fixture.native
        native.grantTypes = [.authorizationCode, .refreshToken]
        native.refreshTokensWithoutOfflineAccess = true
        #expect(
            RefreshTokenIssuance.decide(grant: .authorizationCode, client: native, scopes: Self.granted)
                == .notIssued)
        #expect(
            RefreshTokenIssuance.decide(grant: .authorizationCode, client: native, scopes: Self.offline)
                == .newFamily)
    }

    @Test func clientsWithoutTheRefreshGrantGetNoFamily() {
        var client = Fixture.web
        client.grantTypes = [.authorizationCode]
        #expect(
            RefreshTokenIssuance.decide(grant: .authorizationCode, client: client, scopes: Self.offline)
                == .notIssued)
    }

    /// FAPI 2.0 Security Profile §5.3.2.1: a retry with the previous refresh token must succeed,
    /// so a fapi2 client's token is kept: no new token, the tokens still in its family.
    @Test func aFAPI2ClientsRefreshTokenIsKept() {
        var fapi = Fixture.web
        fapi.profile = .fapi2
        let decided = RefreshTokenIssuance.decide(grant: .refreshToken, client: fapi, scopes: Self.granted)
        #expect(decided == .kept)
        #expect(!decided.issuesToken && decided.belongsToFamily)
        #expect(!RefreshTokenIssuance.notIssued.belongsToFamily)
    }

    @Test func refreshGrantsRotateAndClientCredentialsNeverRefresh() {
        #expect(
            RefreshTokenIssuance.decide(grant: .refreshToken, client: Fixture.web, scopes: Self.granted)
                == .rotation)
        #expect(
            RefreshTokenIssuance.decide(grant: .refreshToken, client: Fixture.web, scopes: [])
                == .rotation)
        #expect(
            RefreshTokenIssuance.decide(grant: .clientCredentials, client: Fixture.web, scopes: Self.offline)
                == .notIssued)
        #expect(RefreshTokenIssuance.rotation.issuesToken && RefreshTokenIssuance.newFamily.issuesToken)
        #expect(!RefreshTokenIssuance.notIssued.issuesToken)
    }
}
