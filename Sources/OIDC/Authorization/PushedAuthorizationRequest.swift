/// Pushed authorization requests (RFC 9126): the rules that need no database.
///
/// The client posts its authorization request to `/par` (authenticated like at `/token`),
/// gets a one-time `request_uri`, and sends the browser to `/authorize` with only
/// `client_id` and that `request_uri`. The parameters never travel through the browser, so
/// they cannot be read or changed there.
///
/// Lifetime: a pushed request must reach `/authorize` within `expires_in` (60 s by default,
/// RFC 9126 §2.2), which a user typing a password would otherwise outlive. So its first use
/// there starts the sign-in window (`interactionSeconds`) and binds it to that browser (an
/// HttpOnly cookie whose digest the request keeps): the request is resolved again on every pass
/// through the sign-in, account-chooser and consent pages (they carry `client_id` and
/// `request_uri` like any other request parameter), only from that browser, and is consumed in
/// the same transaction that stores the authorization code (RFC 9126 §4: one-time; a reload
/// before the code repeats harmlessly). A `request_uri` copied from the address bar or a log
/// during the sign-in is of no use in another browser.
public enum PushedAuthorizationRequest {
    /// RFC 9126 §2.2: a URN the client cannot mistake for a URL it should fetch.
    public static let requestURIPrefix = "urn:ietf:params:oauth:request_uri:"

    /// After the first `/authorize`, the time the user has to sign in and consent (the
    /// lifetime of a remembered request is an hour; a pushed request is tighter).
    public static let interactionSeconds = 600

    /// Client authentication travels in the pushed body but is not part of the request: it is
    /// never stored (a `client_secret` must not sit in a table in the clear).
    static let clientAuthenticationParameters: Set<String> = [
        "client_secret", "client_assertion", "client_assertion_type",
    ]

    /// The request URI that names a pushed request; `reference` is its random part (only its
    /// digest is stored).
    public static func requestURI(reference: String) -> String { requestURIPrefix + reference }

    /// The random part of a `request_uri` this server issued; nil for anything else (an
    /// `https` URL to fetch stays unsupported).
    public static func reference(in requestURI: String) -> String? {
        guard requestURI.hasPrefix(requestURIPrefix) else { return nil }
        let reference = String(requestURI.dropFirst(requestURIPrefix.count))
        guard !reference.isEmpty, reference.utf8.count <= 128 else { return nil }
        return reference
    }

    /// The pushed body as the authorization request to validate and store (RFC 9126 §2.1):
    /// without client authentication parameters, with the authenticated `client_id`.
    /// - Throws: `invalid_request` for a `request_uri` in the body (§2.1: it MUST NOT be
    ///   provided) or a `client_id` other than the authenticated client's.
    public static func parameters(pushed: Parameters, client: OAuthClient) throws(OAuthError) -> Parameters {
        if pushed.contains("request_uri") {
            throw .invalidRequest("The 'request_uri' parameter cannot be pushed.")
        }
        let clientIDs = pushed.values("client_id")
        if clientIDs.contains(where: { $0 != client.clientID }) || clientIDs.count > 1 {
            throw .invalidRequest("The 'client_id' does not name the authenticated client.")
        }
        var items = pushed.items.filter { !clientAuthenticationParameters.contains($0.name) }
        if clientIDs.isEmpty { items.insert((name: "client_id", value: client.clientID), at: 0) }
        return Parameters(items)
    }
}
