import Foundation
import Postgres
import Synchronization
import Testing

@testable import AuthServer

#if canImport(Glibc)
    import Glibc
#endif

/// How long the fault runs last: a few seconds per phase in the test command,
/// `AUTH_FAULTS_SECONDS` per phase for the long runs of `scripts/faults`.
enum FaultSettings {
    static var phaseSeconds: Double {
        Double(ProcessInfo.processInfo.environment["AUTH_FAULTS_SECONDS"] ?? "") ?? 2
    }
    static var workers: Int {
        Int(ProcessInfo.processInfo.environment["AUTH_FAULTS_WORKERS"] ?? "") ?? 3
    }
}

final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func stop() { value.store(true, ordering: .relaxed) }
    var stopped: Bool { value.load(ordering: .relaxed) }
}

@Suite("Faults: database loss, SIGTERM and slow clients")
struct FaultTests {
    /// Password sign-ups in a loop on `workers` threads until `flag` stops them.
    static func signUpLoad(port: Int, origin: String, workers: Int, flag: StopFlag, record: LoadRecord)
        -> DispatchGroup
    {
        let group = DispatchGroup()
        for worker in 0..<workers {
            group.enter()
            Thread.detachNewThread {
                var n = 0
                while !flag.stopped {
                    n += 1
                    let email = "load-\(worker)-\(n)-\(UUID().uuidString.prefix(6).lowercased())@example.com"
                    let agent = PortAgent(port: port, origin: origin)
                    let started = Date()
                    let status =
                        (try? agent.send(
                            "POST", "/api/signup/password",
                            json: [
                                "email": email, "display_name": "Load \(n)",
                                "password": "correct horse battery",
                            ]
                        ).status) ?? -1
                    record.add(
                        .init(
                            status: status, seconds: Date().timeIntervalSince(started), email: email,
                            at: started))
                }
                group.leave()
            }
        }
        return group
    }

    /// The lines of a server log at level error, for the message of a failed expectation.
    static func errorLines(_ log: String) -> [Substring] {
        log.split(separator: "\n").filter { $0.contains(" level=error ") }
    }

    @Test func databaseStopAndRestartDuringLoad() throws {
        let phase = FaultSettings.phaseSeconds
        let directory = URL(fileURLWithPath: "/tmp/auth-fault-db-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var cluster = try PostgresCluster.start(dataDirectory: directory.appendingPathComponent("pg"))
        defer { try? cluster.stop() }
        try cluster.createDatabase("auth")
        let url = cluster.url(database: "auth")
        // Every sign-up of the load comes from 127.0.0.1: lift the per-client sign-up budget.
        let server = try ServeProcess(
            databaseURL: url, extraConfig: #", "sign_up": {"max_per_client": 100000}"#)
        let pid = server.process.processIdentifier

        let user = PortAgent(port: server.port, origin: server.issuer)
        #expect(
            try user.send(
                "POST", "/api/signup/password",
                json: [
                    "email": TestAgent.uniqueEmail("down"), "display_name": "D",
                    "password": "correct horse battery",
                ]
            ).status == 201)

        let record = LoadRecord()
        let flag = StopFlag()
        let load = Self.signUpLoad(
            port: server.port, origin: server.issuer, workers: FaultSettings.workers, flag: flag,
            record: record)
        Thread.sleep(forTimeInterval: phase)

        // PostgreSQL goes away (pg_ctl stop -m fast: sessions are disconnected).
        let stoppedAt = Date()
        try cluster.stop()
        let downSince = Date()
        let ready = try server.client.get("/readyz")
        #expect(ready.status == 503, "readyz fails while the database is down")
        #expect(try server.client.get("/healthz").status == 200, "the process itself stays up")
        let token = TestAgent.Reply(
            response: try server.client.post(
                "/token",
                form: [("grant_type", "refresh_token"), ("refresh_token", "x"), ("client_id", "native-app")]))
        #expect(token.status == 503)
        #expect(token.error == "temporarily_unavailable")
        let authorize = try server.client.get(
            "/authorize?"
                + AuthorizationAttempt(clientID: "native-app", redirectURI: "http://127.0.0.1:5000/callback")
                .query)
        #expect(authorize.status == 503, "\(authorize.text.prefix(200))")
        // A page whose session lookup fails reaches the router's DatabaseUnavailable middleware.
        let account = try user.send("GET", "/account")
        #expect(account.status == 503, "\(account.text.prefix(200))")
        #expect(account.header("Retry-After") == "2")
        Thread.sleep(forTimeInterval: phase)

        // Back on the same port: the pool reconnects without a restart of the server.
        let downUntil = Date()
        cluster = try PostgresCluster.start(dataDirectory: cluster.dataDirectory, port: cluster.port)
        let recovered = waitUntil(seconds: 30) { (try? server.client.get("/readyz"))?.status == 200 }
        #expect(recovered, "readyz recovers once the database is back")
        let recoveredAt = Date()
        Thread.sleep(forTimeInterval: phase)
        flag.stop()
        load.wait()
        #expect(server.process.isRunning && server.process.processIdentifier == pid, "no restart")

        let entries = record.all
        let unexpected = entries.filter { $0.status != 201 && $0.status != 503 }
        #expect(
            unexpected.isEmpty,
            "only 201 or 503: \(unexpected.map(\.status)); the server's errors: \(Self.errorLines(server.log))"
        )
        #expect(
            entries.contains { $0.status == 201 && $0.at < stoppedAt }, "sign-ups succeeded before the stop")
        let whileDown = entries.filter {
            $0.at > downSince && $0.at.addingTimeInterval($0.seconds) < downUntil
        }
        #expect(!whileDown.isEmpty && whileDown.allSatisfy { $0.status == 503 }, "503 while down")
        // Quickly: no refusal waits for a timeout (generous bound for two busy cores).
        #expect(whileDown.allSatisfy { $0.seconds < 5 }, "\(whileDown.map(\.seconds).max() ?? 0) s")
        let afterRecovery = entries.filter { $0.at > recoveredAt.addingTimeInterval(0.5) }
        #expect(
            !afterRecovery.isEmpty && afterRecovery.allSatisfy { $0.status == 201 },
            "all succeed after recovery")

        // Every acknowledged sign-up is there, and every account is whole.
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        let stored = Set(
            try connection.query("SELECT email FROM account_emails").map {
                try $0.decode("email", as: String.self)
            })
        let acknowledged = entries.filter { $0.status == 201 }.map(\.email)
        #expect(acknowledged.count >= 3)
        #expect(acknowledged.allSatisfy { stored.contains($0) }, "acknowledged writes survive")
        let partial = try connection.query(
            """
            SELECT count(*)::int AS n FROM accounts a
            WHERE NOT EXISTS (SELECT 1 FROM account_emails e WHERE e.account_id = a.id)
               OR NOT EXISTS (SELECT 1 FROM password_credentials p WHERE p.account_id = a.id)
            """)
        #expect(try partial.first?.decode("n", as: Int.self) == 0, "no half-written account")
        #expect(server.terminate() == 0)
    }

    @Test func sigtermFinishesInFlightRequestsRefusesNewOnesAndExitsZero() throws {
        let server = try ServeProcess(databaseURL: try TestCluster.freshDatabaseURL())
        let port = server.port
        // Each request is a sign-up (an Argon2id hash): enough of them keep the workers busy.
        let count = 16
        var agents: [PortAgent] = []
        for _ in 0..<count {
            let agent = PortAgent(port: port, origin: server.issuer)
            agent.csrfToken = try agent.send("GET", "/api/csrf").json["csrf_token"] as? String
            agents.append(agent)
        }
        let record = LoadRecord()
        let group = DispatchGroup()
        let launched = DispatchSemaphore(value: 0)
        for (index, agent) in agents.enumerated() {
            group.enter()
            let box = UncheckedBox(agent)
            Thread.detachNewThread {
                launched.signal()
                let email = "term-\(index)-\(UUID().uuidString.prefix(6).lowercased())@example.com"
                let status =
                    (try? box.value.send(
                        "POST", "/api/signup/password",
                        json: ["email": email, "display_name": "T", "password": "correct horse battery"]
                    ).status) ?? -1
                record.add(.init(status: status, seconds: 0, email: email, at: Date()))
                group.leave()
            }
        }
        for _ in 0..<count { launched.wait() }
        Thread.sleep(forTimeInterval: 0.15)
        let terminatedAt = Date()
        kill(server.process.processIdentifier, SIGTERM)
        // New connections are refused while the in-flight requests finish.
        let refused = waitUntil(seconds: 5) {
            (try? TestHTTPClient(port: port).get("/healthz")) == nil
        }
        #expect(refused, "new connections are refused after SIGTERM")
        #expect(group.wait(timeout: .now() + 60) == .success)
        let entries = record.all
        #expect(entries.count == count)
        // Every request sent before the signal got its whole answer: created, or 503 when the
        // password hasher's queue was full; none was cut off.
        #expect(entries.allSatisfy { $0.status == 201 || $0.status == 503 }, "\(entries.map(\.status))")
        #expect(entries.contains { $0.status == 201 }, "\(entries.map(\.status))")
        #expect(entries.contains { $0.at > terminatedAt }, "some requests were still in flight at SIGTERM")
        #expect(server.terminate(waitSeconds: 30) == 0, "exit status 0: \(server.log.suffix(2000))")
        #expect(server.log.contains("event=server.stopped"))
    }

    @Test func slowClientsDoNotStopOthersAndAreCutOff() throws {
        // The slow clients and the normal user all come from 127.0.0.1: lift the per-address
        // connection limit, so that this test measures the header timeout alone.
        let app = try TestApplication { $0.http.maxConnectionsPerAddress = 1_000 }
        let port = app.server.port
        let slowCount = 200
        var sockets: [Int32] = []
        for _ in 0..<slowCount {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            try #require(connected == 0)
            sockets.append(fd)
        }
        defer { sockets.forEach { close($0) } }
        // One thread dribbles a byte per connection every 100 ms: a request head that never ends.
        let flag = StopFlag()
        let closedByServer = Counter()
        let dribbler = DispatchSemaphore(value: 0)
        let fds = sockets
        Thread.detachNewThread {
            let head = Array("POST /api/signin/password HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8)
            var open = Set(fds)
            var step = 0
            while !flag.stopped && !open.isEmpty {
                let byte: UInt8 = step < head.count ? head[step] : UInt8(ascii: "a")
                for fd in open {
                    var value = byte
                    if send(fd, &value, 1, Int32(MSG_NOSIGNAL)) != 1 {
                        open.remove(fd)
                        closedByServer.increment()
                    }
                }
                step += 1
                Thread.sleep(forTimeInterval: 0.1)
            }
            dribbler.signal()
        }
        // Declared after the sockets' close, so it runs first: the dribbler stops sending before
        // the descriptors close (and perhaps take another test's numbers), even when a check throws.
        defer {
            flag.stop()
            dribbler.wait()
        }

        // Meanwhile a normal user signs up, signs in, uses the account, within a few seconds.
        Thread.sleep(forTimeInterval: 0.5)
        let started = Date()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail("slow")
        #expect(try agent.signUp(email: email).status == 201)
        let other = TestAgent(app)
        #expect(try other.signIn(email: email, password: "correct horse battery").status == 200)
        #expect(try other.send("GET", "/api/account").status == 200)
        for _ in 0..<20 { #expect(try app.client.get("/healthz").status == 200) }
        #expect(Date().timeIntervalSince(started) < 10, "others are served while slow clients dribble")

        // The header timeout (10 s for a whole head) cuts the slow connections off.
        let cut = waitUntil(seconds: 20) { closedByServer.value >= slowCount * 9 / 10 }
        #expect(cut, "\(closedByServer.value) of \(slowCount) cut off")
        #expect(try app.client.get("/healthz").status == 200)
    }
}

/// Hands a non-Sendable value to one thread that alone uses it from then on.
final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
