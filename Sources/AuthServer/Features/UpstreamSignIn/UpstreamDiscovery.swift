import Foundation
import OIDC
import Synchronization

/// The endpoints of an upstream provider: Apple's from its configuration (Apple publishes no
/// discovery document for Sign in with Apple's web flow), a generic provider's from its
/// discovery document (OpenID Connect Discovery 1.0 §4), fetched with `OutgoingFetch` and kept
/// for `maxAge`.
struct UpstreamEndpoints: Sendable, Equatable {
    var authorization: String
    var token: String
    var jwks: String
}

final class UpstreamDiscovery: Sendable {
    static let shared = UpstreamDiscovery()
    static let maxAge: Duration = .seconds(3_600)
    /// A failed fetch is not retried for this long, so a stream of button clicks cannot turn
    /// this server into a request generator against a broken provider.
    static let retryInterval: Duration = .seconds(5)

    enum Failure: Error, Equatable {
        case fetch(OutgoingFetchError)
        case malformed
        /// §4.3: the document's `issuer` must be exactly the issuer it was fetched for.
        case issuerMismatch
        case retryLater
    }

    private struct Entry {
        var endpoints: UpstreamEndpoints?
        var fetchedAt: ContinuousClock.Instant
    }

    private let cache = Mutex<[String: Entry]>([:])

    private struct Document: Decodable {
        var issuer: String
        var authorizationEndpoint: String
        var tokenEndpoint: String
        var jwksURI: String

        enum CodingKeys: String, CodingKey {
            case issuer
            case authorizationEndpoint = "authorization_endpoint"
            case tokenEndpoint = "token_endpoint"
            case jwksURI = "jwks_uri"
        }
    }

    /// The endpoints of `issuer`, from `<issuer>/.well-known/openid-configuration` (§4.1: the
    /// issuer with any trailing `/` removed, then the well-known path).
    func endpoints(issuer: String, fetch: OutgoingFetch) throws(Failure) -> UpstreamEndpoints {
        let now = ContinuousClock.now
        if let cached = cache.withLock({ $0[issuer] }) {
            if let endpoints = cached.endpoints, now - cached.fetchedAt < Self.maxAge { return endpoints }
            if cached.endpoints == nil, now - cached.fetchedAt < Self.retryInterval { throw .retryLater }
        }
        let base = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        do {
            let body = try fetch.get(base + "/.well-known/openid-configuration")
            guard let document = try? JSONDecoder().decode(Document.self, from: Data(body)) else {
                throw Failure.malformed
            }
            guard document.issuer == issuer else { throw Failure.issuerMismatch }
            let endpoints = UpstreamEndpoints(
                authorization: document.authorizationEndpoint, token: document.tokenEndpoint,
                jwks: document.jwksURI)
            cache.withLock { $0[issuer] = Entry(endpoints: endpoints, fetchedAt: now) }
            return endpoints
        } catch let failure as Failure {
            cache.withLock { $0[issuer] = Entry(endpoints: nil, fetchedAt: now) }
            throw failure
        } catch let error as OutgoingFetchError {
            cache.withLock { $0[issuer] = Entry(endpoints: nil, fetchedAt: now) }
            throw .fetch(error)
        } catch {
            throw .malformed
        }
    }
}
