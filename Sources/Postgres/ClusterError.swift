/// A cluster could not be created, started or stopped; the message says why.
public struct ClusterError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
