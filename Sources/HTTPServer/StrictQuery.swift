/// Refuses, with 400, any request whose query string is not valid percent-encoded UTF-8.
///
/// Handlers that read single values through `queryItems` would otherwise drop an undecodable
/// pair silently and carry on without it (a sign-in page without its `return_to`, say); a
/// client that sends such a query has a bug or is probing, and deserves a clear refusal.
public struct StrictQuery: HTTPMiddleware {
    public init() {}

    public func handle(
        _ request: HTTPRequest, context: inout RequestContext,
        next: (HTTPRequest, inout RequestContext) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        _ = try request.decodedQuery()
        return try next(request, &context)
    }
}
