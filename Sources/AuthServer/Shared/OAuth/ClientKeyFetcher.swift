import Foundation
import OIDC
import Synchronization

/// The public keys of a client: its configured `jwks`, or the JWK Set at its `jwks_uri`
/// (RFC 7591 §2), and the keys of upstream providers (`keys(at:)`), fetched with
/// `OutgoingFetch` and kept for `maxAge`. A key id the cached set does not have (the client or
/// provider rotated its keys) fetches the set again, at most once per
/// `refetchInterval` per URL, so a stream of made-up `kid`s cannot turn this server into a
/// request generator against the client's host.
final class ClientKeyFetcher: Sendable {
    static let shared = ClientKeyFetcher()

    static let maxAge: Duration = .seconds(300)
    static let refetchInterval: Duration = .seconds(5)

    private struct Entry {
        var keys: JWKS
        var fetchedAt: ContinuousClock.Instant
    }

    private let cache = Mutex<[String: Entry]>([:])

    enum Failure: Error, Equatable {
        /// The client has neither `jwks` nor `jwks_uri`.
        case noKeys
        case fetch(OutgoingFetchError)
    }

    /// The client's keys for a JWS with `keyID`.
    func keys(for client: OAuthClient, keyID: String?, settings: Configuration.OAuthSettings) throws(Failure)
        -> JWKS
    {
        if let jwks = client.jwks { return jwks }
        guard let uri = client.jwksURI else { throw .noKeys }
        return try keys(
            at: uri, keyID: keyID,
            fetch: OutgoingFetch(
                allowLoopback: settings.jwksURIAllowLoopbackForTests, caFile: settings.jwksURICAFile))
    }

    /// The JWK Set at `uri` (a client's `jwks_uri`, an upstream provider's keys) for a JWS with
    /// `keyID`, fetched under `fetch`'s rules.
    func keys(at uri: String, keyID: String?, fetch: OutgoingFetch) throws(Failure) -> JWKS {
        let now = ContinuousClock.now
        let cached = cache.withLock { $0[uri] }
        if let cached {
            let fresh = now - cached.fetchedAt < Self.maxAge
            let known = keyID.map { cached.keys.key(withID: $0) != nil } ?? true
            let mayRefetch = now - cached.fetchedAt >= Self.refetchInterval
            if (fresh && known) || !mayRefetch { return cached.keys }
        }
        do {
            let body = try fetch.get(uri)
            guard let set = try? JSONDecoder().decode(JWKS.self, from: Data(body)) else {
                throw OutgoingFetchError.malformed
            }
            // Only public members are kept, whatever the document held.
            let keys = set.publicKeys
            cache.withLock { $0[uri] = Entry(keys: keys, fetchedAt: now) }
            return keys
        } catch let error as OutgoingFetchError {
            // A failed refresh keeps the cached keys usable until they are too old.
            if let cached, now - cached.fetchedAt < Self.maxAge * 2 { return cached.keys }
            throw .fetch(error)
        } catch {
            throw .fetch(.malformed)
        }
    }
}
