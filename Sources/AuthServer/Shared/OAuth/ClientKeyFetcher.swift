import Foundation
import OIDC
import Synchronization

/// The public keys of a client: its configured `jwks`, or the JWK Set at its `jwks_uri`
/// (RFC 7591 §2), and the keys of upstream providers (`keys(at:)`), fetched with
/// `OutgoingFetch` and kept for `maxAge`. A key id the cached set does not have (the client or
/// provider rotated its keys) fetches the set again. Each URL is fetched at most once per
/// `refetchInterval`, whether the last fetch succeeded, failed or is still under way, so a
/// stream of made-up `kid`s cannot turn this server into a request generator against the
/// client's host, nor a slow or failing host hold one worker per request for the fetch's time
/// limit: within the interval a request gets the cached keys, or at once the last failure.
final class ClientKeyFetcher: Sendable {
    static let shared = ClientKeyFetcher()

    static let maxAge: Duration = .seconds(300)
    static let refetchInterval: Duration = .seconds(5)

    private struct Entry {
        /// The last set fetched, and when.
        var fetched: (keys: JWKS, at: ContinuousClock.Instant)?
        /// When the last fetch started, and how it failed (nil: it succeeded or is under way).
        var attemptedAt: ContinuousClock.Instant
        var failure: OutgoingFetchError?
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

    private enum Decision {
        case use(JWKS)
        case fail(OutgoingFetchError)
        /// This request fetches; the keys to fall back on if the fetch fails.
        case fetch(usable: JWKS?)
    }

    /// The JWK Set at `uri` (a client's `jwks_uri`, an upstream provider's keys) for a JWS with
    /// `keyID`, fetched under `fetch`'s rules.
    func keys(at uri: String, keyID: String?, fetch: OutgoingFetch) throws(Failure) -> JWKS {
        let now = ContinuousClock.now
        // Decided and claimed under the lock: of requests arriving together, one fetches.
        let decision = cache.withLock { cache -> Decision in
            let entry = cache[uri]
            if let fetched = entry?.fetched, now - fetched.at < Self.maxAge,
                keyID.map({ fetched.keys.key(withID: $0) != nil }) ?? true
            {
                return .use(fetched.keys)
            }
            // A failed refresh keeps the cached keys usable until they are too old.
            let usable = entry?.fetched.flatMap { now - $0.at < Self.maxAge * 2 ? $0.keys : nil }
            if let entry, now - entry.attemptedAt < Self.refetchInterval {
                if let usable { return .use(usable) }
                return .fail(entry.failure ?? .connection("a fetch of this key set is under way"))
            }
            cache[uri] = Entry(fetched: entry?.fetched, attemptedAt: now, failure: nil)
            return .fetch(usable: usable)
        }
        let fallback: JWKS?
        switch decision {
        case .use(let keys): return keys
        case .fail(let error): throw .fetch(error)
        case .fetch(let usable): fallback = usable
        }
        do {
            let body = try fetch.get(uri)
            guard let set = try? JSONDecoder().decode(JWKS.self, from: Data(body)) else {
                throw OutgoingFetchError.malformed
            }
            // Only public members are kept, whatever the document held.
            let keys = set.publicKeys
            cache.withLock { $0[uri] = Entry(fetched: (keys, now), attemptedAt: now, failure: nil) }
            return keys
        } catch {
            let failure = error as? OutgoingFetchError ?? .malformed
            cache.withLock { $0[uri]?.failure = failure }
            if let fallback { return fallback }
            throw .fetch(failure)
        }
    }
}
