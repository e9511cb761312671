import Foundation
import HTTPServer

/// The accounts signed in in one browser (see `BrowserSessions`): listing them, switching the
/// current one, and signing out of one or all.
///
/// Every operation starts from the browser's own cookies and names a session by its public id:
/// a form can only pick among sessions the browser already holds, so no post can plant a
/// session (fixation) or reach one of another browser.
struct AccountChooserFlow {
    let services: AccountServices

    /// The browser's live accounts, the current one first.
    func accounts(_ request: HTTPRequest) throws -> [BrowserAccount] {
        try services.sessions.accounts(of: BrowserSessions(request, cookies: services.cookies))
    }

    /// Makes the account of session `sessionID` current; nil when the browser holds no such
    /// live session. Returns the cookies to set (dead tokens pruned).
    func switchTo(_ sessionID: UUID, _ request: HTTPRequest) throws -> [Cookie]? {
        let live = try accounts(request)
        guard let chosen = live.first(where: { $0.sessionID == sessionID }) else { return nil }
        let browser = BrowserSessions(current: nil, others: live.map(\.token)).switching(to: chosen.token)
        services.log.info("accounts.switched", ["account": chosen.accountID.uuidString])
        return browser.cookies(services.cookies)
    }

    /// Ends the session `sessionID` of this browser (nil: every one), each with its
    /// `session.signed_out` event; ending a session queues back-channel logout for that session
    /// only. The other accounts stay signed in. Returns the cookies to set and how many remain.
    func signOut(_ sessionID: UUID?, _ request: HTTPRequest) throws -> (cookies: [Cookie], remaining: Int) {
        let live = try accounts(request)
        let ending = live.filter { sessionID == nil || $0.sessionID == sessionID }
        for account in ending {
            try services.sessions.signOut(account.session, clientAddress: request.remoteAddress)
        }
        var browser = BrowserSessions(
            current: live.first(where: \.isCurrent)?.token, others: live.filter { !$0.isCurrent }.map(\.token)
        )
        for account in ending { browser = browser.removing(account.token) }
        return (browser.cookies(services.cookies), browser.all.count)
    }
}
