import Foundation
import Hummingbird

/// `GET /admin/v1/tenants/{tenant}/statistics?hours=24`: the tenant's approval requests by the
/// hour they were made, with how each ended (approved, denied, expired, still pending), and its
/// push notifications that failed, for the console's dashboard and for any monitoring. Counted
/// in the database, so every node's work is in it.
struct StatisticsAdminRoutes: Sendable {
    let store: any StatisticsStore
    let guardian: AdminGuard
    let now: @Sendable () -> Date

    /// The longest window one call covers: a week of hours.
    static let hourRange = 1...168

    struct Bucket: Codable, Sendable, Equatable {
        var start: Date
        var requests: Int64 = 0
        var approved: Int64 = 0
        var denied: Int64 = 0
        var expired: Int64 = 0
        var pushFailures: Int64 = 0

        enum CodingKeys: String, CodingKey {
            case start, requests, approved, denied, expired
            case pushFailures = "push_failures"
        }
    }

    struct Statistics: Encodable, Sendable {
        let from: Date
        let until: Date
        let bucketSeconds: Int
        let buckets: [Bucket]

        enum CodingKeys: String, CodingKey {
            case from, until, buckets
            case bucketSeconds = "bucket_seconds"
        }
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        router.get("/admin/v1/tenants/{tenant}/statistics") { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .auditRead)
            let values = request.uri.queryParameters.getAll("hours")
            guard values.count <= 1 else { throw APIError.badRequest("query parameter hours is given more than once") }
            var hours = 24
            if let text = values.first {
                guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), text.utf8.first != 0x30, let value = Int(String(text)),
                      Self.hourRange.contains(value) else {
                    throw APIError.badRequest("hours must be a whole number from 1 to 168")
                }
                hours = value
            }
            return try JSON.response(try await statistics(tenantID: tenant.id, hours: hours))
        }
    }

    func statistics(tenantID: String, hours: Int) async throws -> Statistics {
        let date = now()
        let hour: Int64 = 3_600_000
        let last = Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) / hour
        let first = last - Int64(hours) + 1
        var buckets = (first...last).map { Bucket(start: Date(timeIntervalSince1970: TimeInterval($0 * hour) / 1000)) }
        for row in try await store.requests(tenantID: tenantID, fromHour: first, at: date) {
            let index = Int(row.hour - first)
            guard buckets.indices.contains(index) else { continue }
            (buckets[index].requests, buckets[index].approved) = (row.requests, row.approved)
            (buckets[index].denied, buckets[index].expired) = (row.denied, row.expired)
        }
        for row in try await store.pushFailures(tenantID: tenantID, fromHour: first) {
            let index = Int(row.hour - first)
            if buckets.indices.contains(index) { buckets[index].pushFailures = row.failures }
        }
        return Statistics(from: buckets[0].start, until: date, bucketSeconds: 3600, buckets: buckets)
    }
}

/// What the statistics read: counts grouped by the hour (milliseconds since 1970 ÷ 3,600,000).
protocol StatisticsStore: Sendable {
    func requests(tenantID: String, fromHour: Int64, at date: Date) async throws -> [StatisticsRequestRow]
    func pushFailures(tenantID: String, fromHour: Int64) async throws -> [StatisticsPushRow]
}

typealias StatisticsRequestRow = ApprovalHourlyCounts
typealias StatisticsPushRow = PushHourlyFailures

/// The statistics read from the tables' owners: the approvals' outcomes and push's failures.
struct SQLStatisticsStore: StatisticsStore {
    let database: any Database
    var approvals = SQLApprovalTransactionRepository()
    var pushOutbox = SQLPushOutboxRepository()

    func requests(tenantID: String, fromHour: Int64, at date: Date) async throws -> [StatisticsRequestRow] {
        try await approvals.hourlyCounts(tenantID: tenantID, fromHour: fromHour, at: date, on: database)
    }

    func pushFailures(tenantID: String, fromHour: Int64) async throws -> [StatisticsPushRow] {
        try await pushOutbox.hourlyFailures(tenantID: tenantID, fromHour: fromHour, on: database)
    }
}
