import HTTPServer

extension JSONAPI {
    typealias StepHandler = @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse

    /// Registers a handler whose every failure answers as an `APIError`: its own `APIError`s
    /// as they are, an unavailable database as 503, anything else as a 500 logged under `step`
    /// (see `AccountServices.guarded`). The routes then hold no error wrapper of their own.
    func add(_ method: HTTPMethod, _ path: String, step: String, _ handler: @escaping StepHandler) {
        let services = services
        add(method, path) { request, context throws(APIError) in
            try services.guarded(step) { try handler(request, context) }
        }
    }
}
