import Foundation
import Testing

@testable import Postgres

@Suite struct PostgresClusterTests {
    @Test func unreachableDataDirectoryGivesAClearError() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pg-locked-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let locked = root.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        chmod(locked.path, 0)
        defer { chmod(locked.path, 0o700) }

        #expect {
            _ = try PostgresCluster.start(dataDirectory: locked.appendingPathComponent("data"))
        } throws: { error in
            guard let error = error as? ClusterError else { return false }
            // Root can create the directory but the server user cannot reach it; anyone else
            // cannot even create it.
            return geteuid() == 0
                ? error.description.contains("every parent directory must be traversable")
                : error.description.contains("cannot create data directory")
        }
    }

    @Test func databaseNamesMustBePlainIdentifiers() throws {
        let cluster = try TestDatabase.cluster.get()
        for name in [
            "", "Upper", "with-dash", "1starts_with_digit", "quote\"d", String(repeating: "a", count: 64),
        ] {
            #expect(postgresErrorKind { try cluster.createDatabase(name) } == .syntaxOrUsage, "\(name)")
        }
        #expect(cluster.url(database: "x") == "postgresql://postgres@127.0.0.1:\(cluster.port)/x")
    }

    @Test func freePortIsALoopbackPortNobodyListensOn() throws {
        let port = try PostgresCluster.freePort()
        #expect((1024...65535).contains(port))
    }

    /// The server keeps none of this process's open files. A pipe open here while a cluster
    /// starts must reach its end once its writer closes; otherwise whoever reads it to the end
    /// (a test reading a child's output) waits for as long as the cluster runs.
    @Test func theServerHoldsNoFileOfThisProcess() throws {
        let pipe = Pipe()
        let cluster = try PostgresCluster.temporary()
        defer { try? cluster.stop() }
        try pipe.fileHandleForWriting.close()
        var reader = pollfd(fd: pipe.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&reader, 1, 5_000) == 1, "the pipe's writer is still open in the server")
        #expect(reader.revents & Int16(POLLHUP) != 0)
    }

    @Test func serverBinariesAreFound() throws {
        let directory = try PostgresCluster.findBinDirectory()
        #expect(FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("pg_ctl").path))
    }
}

@Suite struct PostgresErrorMappingTests {
    @Test(arguments: [
        ("23505", PostgresError.Kind.uniqueViolation), ("23503", .foreignKeyViolation),
        ("23514", .checkViolation),
        ("23502", .notNullViolation), ("40001", .serializationFailure), ("40P01", .deadlockDetected),
        ("57014", .queryCanceled), ("57P01", .adminShutdown), ("57P02", .adminShutdown),
        ("57P03", .adminShutdown),
        ("08006", .connectionFailure), ("08001", .connectionFailure), ("22P02", .dataException),
        ("42P01", .syntaxOrUsage), ("XX000", .other),
    ])
    func sqlStatesMapToKinds(state: String, kind: PostgresError.Kind) {
        #expect(PostgresError.kind(forSQLState: state, connectionLost: false) == kind)
    }

    @Test func missingSQLStateMeansConnectionLossOnlyWhenTheConnectionIsGone() {
        #expect(PostgresError.kind(forSQLState: nil, connectionLost: true) == .connectionFailure)
        #expect(PostgresError.kind(forSQLState: nil, connectionLost: false) == .other)
    }

    @Test func descriptionsStayGeneric() {
        let error = PostgresError(
            kind: .connectionFailure, detail: "password authentication failed for user \"secret\"")
        #expect(error.description == "database unavailable")
        #expect(!"\(error)".contains("secret"))
    }
}
