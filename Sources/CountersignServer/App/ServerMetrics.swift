import Foundation
import Hummingbird
import Prometheus
import Synchronization

/// The server's Prometheus metrics, in a registry of its own (not the process-wide
/// MetricsSystem), so that several servers in one test process keep separate counts.
public struct ServerMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    /// The unnamed statements already added to their counter.
    private let unnamedReported = ReportedTotal()

    private static let durationBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
    ]

    public init() {}

    private static func name(_ metric: String, unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "countersign", metricName: metric, unitName: unit, helpText: help)
    }

    /// Requests received and not yet answered: what a graceful shutdown waits for.
    var inFlight: Gauge {
        registry.makeGauge(descriptor: Self.name("http_requests_in_flight", unit: "", "requests being answered"))
    }

    func requestFinished(method: String, status: Int, duration: Duration) {
        let labels = [("method", method), ("status", String(status))]
        registry.makeCounter(descriptor: Self.name("http_requests", unit: "total", "HTTP requests answered"),
                             labels: labels).increment()
        registry.makeDurationHistogram(
            descriptor: Self.name("http_request_duration", unit: "seconds", "time to answer an HTTP request"),
            labels: [("method", method)], buckets: Self.durationBuckets
        ).record(duration)
    }

    func enrollment(outcome: String) {
        registry.makeCounter(descriptor: Self.name("enrollments", unit: "total", "enrollment attempts by outcome"),
                             labels: [("outcome", outcome)]).increment()
    }

    func deviceSignatureRejected(code: String) {
        registry.makeCounter(
            descriptor: Self.name("device_signature_rejections", unit: "total", "device request signatures refused"),
            labels: [("error", code)]).increment()
    }

    func approvalStarted(devices: Int) {
        registry.makeCounter(descriptor: Self.name("approval_requests", unit: "total", "approval requests created"))
            .increment()
        registry.makeCounter(descriptor: Self.name("approval_deliveries", unit: "total", "request details sealed to a device"))
            .increment(by: Int64(devices))
    }

    func approvalDecided(_ status: String) {
        registry.makeCounter(descriptor: Self.name("approval_decisions", unit: "total", "device decisions recorded"),
                             labels: [("decision", status)]).increment()
    }

    /// Notifications handed to a push provider, by provider and outcome.
    func pushAttempted(provider: String, outcome: String, count: Int) {
        registry.makeCounter(descriptor: Self.name("push_notifications", unit: "total",
                                                   "notifications handed to APNs or FCM, by provider and outcome"),
                             labels: [("provider", provider), ("outcome", outcome)])
            .increment(by: Int64(count))
    }

    /// Messages handed to a tenant's SMTP server, by kind and outcome: `sent`, `retry` (to be
    /// tried again) or `failed` (given up).
    func mailAttempted(kind: String, outcome: String) {
        registry.makeCounter(descriptor: Self.name("mail_messages", unit: "total",
                                                   "messages handed to a tenant's SMTP server, by kind and outcome"),
                             labels: [("kind", kind), ("outcome", outcome)])
            .increment()
    }

    /// Answers of the CIBA endpoints (`bc-authorize`, `token`, `receipt`): `ok` or the OAuth error code.
    func oauthOutcome(endpoint: String, outcome: String) {
        registry.makeCounter(descriptor: Self.name("ciba_requests", unit: "total", "CIBA endpoint answers by outcome"),
                             labels: [("endpoint", endpoint), ("outcome", outcome)]).increment()
    }

    /// A directory password checked before a push (`DirectoryPasswords`): `verified`, `refused`,
    /// `throttled` or `unavailable`.
    func directoryPasswordChecked(_ outcome: String) {
        registry.makeCounter(
            descriptor: Self.name("directory_password_checks", unit: "total", "directory passwords checked before a push"),
            labels: [("outcome", outcome)]).increment()
    }

    /// A risk rule that fired (`RiskEvaluation`): its action, and whether the rules `enforce` or
    /// only record (`dry_run`).
    func riskRuleFired(action: String, mode: String) {
        registry.makeCounter(
            descriptor: Self.name("risk_rules_fired", unit: "total", "risk rules that fired, by action and mode"),
            labels: [("action", action), ("mode", mode)]).increment()
    }

    /// A Security Event Token handed to a receiver: `push` (`delivered`, `retry`, `refused`,
    /// `given_up`) or `poll` (`delivered` when a poll hands it out, `acknowledged`, `error` when
    /// the receiver answered it with a `setErrs` entry).
    func securityEventDelivered(method: String, outcome: String) {
        registry.makeCounter(
            descriptor: Self.name("security_events", unit: "total", "Security Event Tokens handed to receivers, by method and outcome"),
            labels: [("method", method), ("outcome", outcome)]).increment()
    }

    /// A read of the FIDO metadata source: `loaded`, `unchanged`, `busy` (another node reads it)
    /// or `failed`.
    func metadataRead(_ outcome: String) {
        registry.makeCounter(
            descriptor: Self.name("fido_metadata_reads", unit: "total", "reads of the FIDO metadata source by outcome"),
            labels: [("outcome", outcome)]).increment()
    }

    /// A passkey registration that verified but was refused: `metadata_status` (the model is
    /// revoked or compromised) or `passkey_rules` (the tenant's rules for the user).
    func passkeyRegistrationRefused(_ reason: String) {
        registry.makeCounter(
            descriptor: Self.name("passkey_registrations_refused", unit: "total", "passkey registrations refused by governance"),
            labels: [("reason", reason)]).increment()
    }

    /// A recovery code or temporary access pass typed at `/account/recover`: `code` or `pass`
    /// (`unknown` for neither's shape), and `signed_in`, `refused`, `throttled`, `malformed` or
    /// `outside_networks`.
    func recoveryChecked(_ kind: String, outcome: String) {
        registry.makeCounter(
            descriptor: Self.name("recovery_checks", unit: "total", "recovery codes and access passes checked"),
            labels: [("kind", kind), ("outcome", outcome)]).increment()
    }

    /// A RADIUS request answered: `accept`, `reject` or `challenge`, and by which mode's path.
    func radiusAnswered(_ code: String, path: String) {
        registry.makeCounter(descriptor: Self.name("radius_answers", unit: "total", "RADIUS requests answered"),
                             labels: [("code", code), ("path", path)]).increment()
    }

    /// A RADIUS packet dropped unanswered, and why (`unknown_source`, `malformed`,
    /// `missing_message_authenticator`, `invalid_message_authenticator`, …).
    func radiusDropped(_ reason: String) {
        registry.makeCounter(descriptor: Self.name("radius_dropped", unit: "total", "RADIUS packets dropped unanswered"),
                             labels: [("reason", reason)]).increment()
    }

    /// A retransmitted RADIUS request answered from the duplicate cache, or dropped while the
    /// first copy is still being answered.
    func radiusDuplicate(_ outcome: String) {
        registry.makeCounter(descriptor: Self.name("radius_duplicates", unit: "total", "retransmitted RADIUS requests"),
                             labels: [("outcome", outcome)]).increment()
    }

    /// `bc-authorize` requests refused by a rate limit, by limit (`client` or `user`).
    func bcAuthorizeRateLimited(limit: String) {
        registry.makeCounter(descriptor: Self.name("bc_authorize_rate_limited", unit: "total",
                                                   "bc-authorize requests refused by a rate limit, by limit"),
                             labels: [("limit", limit)]).increment()
    }

    /// Answers of 401 of the client-authenticated OAuth endpoints and the administration API.
    func authenticationFailed() {
        registry.makeCounter(descriptor: Self.name("authentication_failures", unit: "total",
                                                   "client and admin requests answered 401 (failed authentication)")).increment()
    }

    /// Requests refused by the failed-authentication throttle, by limit (`source`, `client` or `admin_key`).
    func authenticationThrottled(limit: String) {
        registry.makeCounter(descriptor: Self.name("authentication_throttled", unit: "total",
                                                   "requests refused after too many failed authentications, by limit"),
                             labels: [("limit", limit)]).increment()
    }

    /// Device live streams open.
    var liveStreams: Gauge {
        registry.makeGauge(descriptor: Self.name("device_live_streams", unit: "", "device live streams open"))
    }

    /// The memory of SQLite's page cache, set each time the metrics are read (not on PostgreSQL).
    var pageCache: Gauge {
        registry.makeGauge(descriptor: Self.name(
            "sqlite_page_cache", unit: "bytes", "memory SQLite's page cache holds (SQLITE_DBSTATUS_CACHE_USED)"))
    }

    /// PostgreSQL's named statements, recorded each time the metrics are read (not on SQLite).
    /// Statements past the limit of kept names are parsed and planned on every run: a counter
    /// that grows says the node's statements have outgrown the limit.
    func record(_ counts: KeptStatementCounts) {
        registry.makeGauge(descriptor: Self.name(
            "postgres_kept_statements", unit: "",
            "distinct statements the node keeps prepared under a name on each PostgreSQL connection"))
            .set(Int64(counts.kept))
        let added = unnamedReported.value.withLock { reported in
            defer { reported = max(reported, counts.unnamedRuns) }
            return max(0, counts.unnamedRuns - reported)
        }
        registry.makeCounter(descriptor: Self.name(
            "postgres_unnamed_statements", unit: "total",
            "statements sent to PostgreSQL unnamed, parsed and planned each time, because the limit of kept statements was reached"))
            .increment(by: Int64(added))
    }

    /// The Prometheus text exposition.
    public func exposition() -> String {
        if let resident = Self.residentMemoryBytes() {
            registry.makeGauge(descriptor: Self.name(
                "process_resident_memory", unit: "bytes", "resident memory of the server process")).set(resident)
        }
        if let anonymous = Self.anonymousMemoryBytes() {
            registry.makeGauge(descriptor: Self.name(
                "process_anonymous_memory", unit: "bytes",
                "resident memory of the server process not backed by a file: its heap and stacks, without code")).set(anonymous)
        }
        registry.makeGauge(descriptor: Self.name(
            "process_cpu", unit: "seconds", "CPU time the server process has used, user and system")).set(Self.cpuSeconds())
        return registry.emitToString()
    }

    /// CPU time this process has used so far, in user and in system mode (`getrusage`).
    public static func cpuSeconds() -> Double {
        var usage = rusage()
        #if os(Linux)
        let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
        let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return 0 }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The anonymous part of the resident set (`RssAnon` in `/proc/self/status`, Linux): what
    /// the process allocated, as opposed to the pages of its binary and libraries, which the
    /// kernel maps in and out around every page touched. nil where there is no such file.
    static func anonymousMemoryBytes() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
              let kibibytes = Int64(line.dropFirst("RssAnon:".count).split(whereSeparator: \.isWhitespace).first ?? "") else {
            return nil
        }
        return kibibytes * 1024
    }

    /// Resident set size from `/proc/self/statm` (Linux); nil where there is no such file.
    static func residentMemoryBytes() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// Counts every request and its duration by method and status.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let inFlight = metrics.inFlight
        inFlight.increment()
        defer { inFlight.decrement() }
        do {
            let response = try await next(request, context)
            metrics.requestFinished(method: request.method.rawValue, status: response.status.code,
                                    duration: ContinuousClock.now - start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.requestFinished(method: request.method.rawValue, status: status, duration: ContinuousClock.now - start)
            throw error
        }
    }
}

/// A running total as far as it has been added to a Prometheus counter.
private final class ReportedTotal: Sendable {
    let value = Mutex(0)
}
