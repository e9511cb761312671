/// Routes requests by method and path pattern, through the middleware chain.
///
/// Patterns are literal segments, `:name` parameters (one non-empty segment) and an optional
/// final `*name` wildcard (the rest of the path, possibly empty). Literal segments win over
/// parameters, parameters over wildcards. Unknown paths get 404, known paths with another
/// method 405 with `Allow`, and HEAD falls back to the GET handler (the server drops the body).
///
/// Configure routes and middleware before the server starts: the router is then only read,
/// which is what makes the `@unchecked Sendable` sound.
public final class Router: HTTPResponder, @unchecked Sendable {
    public typealias Handler = @Sendable (HTTPRequest, inout RequestContext) throws -> HTTPResponse

    private final class Node {
        var literals: [String: Node] = [:]
        var parameter: Node?
        var wildcard: Node?
        var handlers: [HTTPMethod: Handler] = [:]
        var pattern: String?
        /// Names of the parameters (and wildcard) of `pattern`, in path order.
        var parameterNames: [String] = []
    }

    private let root = Node()
    /// Patterns without parameters or wildcards, by their path: most requests match one of
    /// these with a single hash lookup. Equivalent to the tree walk, where a literal segment
    /// always wins.
    private var exactRoutes: [String: Node] = [:]
    private var middlewares: [any HTTPMiddleware] = []

    public init() {}

    /// Adds `handler` for `method` on `pattern` (a later registration of the same pair replaces it).
    public func add(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping Handler) {
        var node = root
        var names: [String] = []
        let segments = Router.segments(of: pattern)
        var isExact = true
        for (index, segment) in segments.enumerated() {
            if segment.hasPrefix(":") && segment.count > 1 {
                isExact = false
                names.append(String(segment.dropFirst()))
                if node.parameter == nil { node.parameter = Node() }
                node = node.parameter ?? node
            } else if segment.hasPrefix("*") && index == segments.count - 1 {
                isExact = false
                names.append(segment.count > 1 ? String(segment.dropFirst()) : "path")
                if node.wildcard == nil { node.wildcard = Node() }
                node = node.wildcard ?? node
            } else {
                let key = String(segment)
                if node.literals[key] == nil { node.literals[key] = Node() }
                node = node.literals[key] ?? node
            }
        }
        node.handlers[method] = handler
        node.pattern = pattern
        node.parameterNames = names
        if isExact { exactRoutes["/" + segments.joined(separator: "/")] = node }
    }

    public func get(_ pattern: String, _ handler: @escaping Handler) { add(.get, pattern, handler) }
    public func post(_ pattern: String, _ handler: @escaping Handler) { add(.post, pattern, handler) }
    public func put(_ pattern: String, _ handler: @escaping Handler) { add(.put, pattern, handler) }
    public func patch(_ pattern: String, _ handler: @escaping Handler) { add(.patch, pattern, handler) }
    public func delete(_ pattern: String, _ handler: @escaping Handler) { add(.delete, pattern, handler) }

    /// Appends a middleware; the first added is the outermost. Middleware also wraps 404/405.
    public func use(_ middleware: any HTTPMiddleware) { middlewares.append(middleware) }

    public func respond(to request: HTTPRequest, context: inout RequestContext) throws -> HTTPResponse {
        let endpoint: Handler
        if let node = matchNode(request.path, &context) {
            if let handler = node.handlers[request.method]
                ?? (request.method == .head ? node.handlers[.get] : nil)
            {
                endpoint = handler
            } else {
                var allowed = Set(node.handlers.keys.map(\.rawValue))
                if allowed.contains("GET") { allowed.insert("HEAD") }
                let allow = allowed.sorted().joined(separator: ", ")
                endpoint = { _, _ in HTTPError(.methodNotAllowed, headers: ["Allow": allow]).response() }
            }
        } else {
            endpoint = { _, _ in HTTPError(.notFound).response() }
        }
        return try run(0, request, &context, endpoint)
    }

    /// The node for `path`, with the route and parameters recorded in `context`.
    private func matchNode(_ path: String, _ context: inout RequestContext) -> Node? {
        if let node = path.utf8.first == UInt8(ascii: "/") ? exactRoutes[path] : nil {
            context.route = node.pattern
            context.pathParameters = [:]
            return node
        }
        var values: [String] = []
        guard let node = Router.match(root, Router.segments(of: path)[...], &values) else { return nil }
        context.route = node.pattern
        var parameters: [String: String] = [:]
        for (name, value) in zip(node.parameterNames, values) { parameters[name] = value }
        context.pathParameters = parameters
        return node
    }

    private func run(
        _ index: Int, _ request: HTTPRequest, _ context: inout RequestContext, _ endpoint: Handler
    ) throws -> HTTPResponse {
        guard index < middlewares.count else { return try endpoint(request, &context) }
        return try middlewares[index].handle(request, context: &context) { request, context in
            try run(index + 1, request, &context, endpoint)
        }
    }

    /// "/" -> [""], "/a/b" -> ["a", "b"], "/a/" -> ["a", ""].
    private static func segments(of path: String) -> [Substring] {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts.first == "" { parts.removeFirst() }
        return parts
    }

    private static func match(_ node: Node, _ segments: ArraySlice<Substring>, _ values: inout [String])
        -> Node?
    {
        guard let segment = segments.first else {
            if node.pattern != nil { return node }
            if let wildcard = node.wildcard, wildcard.pattern != nil {
                values.append("")
                return wildcard
            }
            return nil
        }
        let rest = segments.dropFirst()
        if let child = node.literals[String(segment)], let found = match(child, rest, &values) {
            return found
        }
        if let parameter = node.parameter, !segment.isEmpty {
            values.append(String(segment))
            if let found = match(parameter, rest, &values) { return found }
            values.removeLast()
        }
        if let wildcard = node.wildcard, wildcard.pattern != nil {
            values.append(segments.joined(separator: "/"))
            return wildcard
        }
        return nil
    }
}
