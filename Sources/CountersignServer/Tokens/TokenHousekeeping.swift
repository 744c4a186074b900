import Foundation
import Logging

/// Deletes what no check of a token needs any more: refresh token families a week past their
/// absolute expiry (kept that long so that a late client is told its token expired rather than
/// that it is unknown), and the records of revoked access tokens past their expiry. Runs at
/// most once an hour per node, from the requests that write tokens, through the expiry indexes,
/// so its cost follows what expired rather than what is stored.
struct TokenHousekeeping: Sendable {
    static let expiredFamilyRetention: TimeInterval = 7 * 86_400

    let store: any TokenHousekeepingStore
    let logger: Logger
    private let schedule = PeriodicSchedule(every: 3600)

    init(store: any TokenHousekeepingStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    func runIfDue(at date: Date) async throws {
        guard schedule.isDue(at: date) else { return }
        let families = try await store.forgetFamilies(endedBefore: date.addingTimeInterval(-Self.expiredFamilyRetention))
        try await store.forgetRevokedAccessTokens(expiredBefore: date)
        if families > 0 { logger.debug("removed expired refresh token families", metadata: ["count": "\(families)"]) }
    }
}
