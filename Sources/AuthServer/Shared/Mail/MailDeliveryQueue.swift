import Dispatch
import Foundation
import SMTP
import Synchronization

/// Hands messages to a slower transport (SMTP) on one background thread, so that the request
/// that caused a message never waits for, nor fails because of, the mail server.
///
/// The queue is bounded: when it is full, `deliver` throws and `Mailer` logs the drop. A
/// transient failure (a 4xx reply, a timeout, a lost connection) is retried with exponential
/// backoff; a permanent one (a 5xx reply, a rejected certificate) or the last failed attempt
/// drops the message with a log line naming only the recipient's domain and the reason.
/// Messages live in memory only: a restart loses what is still queued.
final class MailDeliveryQueue: MailTransport {
    struct Policy: Sendable {
        var capacity = 200
        var maxAttempts = 4
        /// Wait before the second attempt; doubles for each further one.
        var retryBase: Duration = .seconds(5)
    }

    enum QueueError: Error { case full, stopped }

    private struct Job {
        var mail: OutgoingMail
        var attempts = 0
        var notBefore = ContinuousClock.now
    }

    private struct State {
        var jobs: [Job] = []
        var stopping = false
        var started = false
    }

    let transport: any MailTransport
    let policy: Policy
    let log: Log
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(transport: any MailTransport, policy: Policy = Policy(), log: Log) {
        self.transport = transport
        self.policy = policy
        self.log = log
    }

    /// Queues the message and returns at once.
    func deliver(_ mail: OutgoingMail) throws {
        try state.withLock { state throws(QueueError) in
            guard !state.stopping else { throw .stopped }
            guard state.jobs.count < policy.capacity else { throw .full }
            state.jobs.append(Job(mail: mail))
        }
        wake.signal()
    }

    /// Messages waiting (for tests and metrics).
    var pendingCount: Int { state.withLock { $0.jobs.count } }

    func start() {
        let begin = state.withLock { state -> Bool in
            guard !state.started else { return false }
            state.started = true
            return true
        }
        guard begin else { return }
        let thread = Thread { [self] in run() }
        thread.name = "mail-delivery"
        thread.start()
    }

    /// Stops taking messages; what is queued gets one last attempt within `gracePeriod`.
    func stop(gracePeriod: Duration = .seconds(10)) {
        let wasStarted = state.withLock { state -> Bool in
            state.stopping = true
            return state.started
        }
        guard wasStarted else { return }
        wake.signal()
        let deadline = DispatchTime.now() + .milliseconds(Int(gracePeriod.components.seconds * 1_000))
        if finished.wait(timeout: deadline) == .timedOut {
            log.warning("mail.queue", ["step": "stop", "reason": "gracePeriodExceeded"])
        }
    }

    private func run() {
        while true {
            let (job, stopping, wait) = next()
            if let job {
                attempt(job, final: stopping)
                continue
            }
            if stopping { break }
            let milliseconds =
                wait.map {
                    Int($0.components.seconds * 1_000 + $0.components.attoseconds / 1_000_000_000_000_000)
                } ?? 60_000
            _ = wake.wait(timeout: .now() + .milliseconds(max(1, milliseconds)))
        }
        finished.signal()
    }

    /// The first due job (any job when stopping), or how long until one is due.
    private func next() -> (Job?, Bool, Duration?) {
        state.withLock { state in
            let now = ContinuousClock.now
            if let index = state.jobs.firstIndex(where: { state.stopping || $0.notBefore <= now }) {
                return (state.jobs.remove(at: index), state.stopping, nil)
            }
            let soonest = state.jobs.map(\.notBefore).min()
            return (nil, state.stopping, soonest.map { $0 - now })
        }
    }

    private func attempt(_ job: Job, final: Bool) {
        var job = job
        job.attempts += 1
        let domain = MailAddress.parse(job.mail.to)?.domain ?? "invalid"
        do {
            try transport.deliver(job.mail)
            log.info("mail.delivered", ["domain": domain, "attempt": String(job.attempts)])
        } catch {
            let smtp = error as? SMTPError
            let reason = smtp?.logReason ?? String(describing: type(of: error))
            let retry = (smtp?.isTransient ?? true) && job.attempts < policy.maxAttempts && !final
            if retry {
                job.notBefore = .now + policy.retryBase * (1 << (job.attempts - 1))
                log.warning(
                    "mail.retry", ["domain": domain, "attempt": String(job.attempts), "reason": reason])
                state.withLock { $0.jobs.append(job) }
            } else {
                log.error(
                    "mail.dropped", ["domain": domain, "attempts": String(job.attempts), "reason": reason])
            }
        }
    }
}
