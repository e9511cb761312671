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
        // Decoding the whole query at once gives the same verdict as decoding each name and value
        // (`&` and `=` are ASCII: no UTF-8 sequence can span them) without building the pairs.
        if let query = request.rawQuery, PercentDecoding.decode(query.utf8, plusAsSpace: true) == nil {
            throw HTTPError(.badRequest, message: "Malformed query string")
        }
        return try next(request, &context)
    }
}
