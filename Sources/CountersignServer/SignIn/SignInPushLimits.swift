import Foundation

/// What a sign-in from a browser the user never signed in with may spend (ASVS 2.2.1): anyone
/// who knows a username can start one, so such sign-ins are not counted against the user's
/// requests per minute (which would let anyone keep the user and their relying parties out),
/// and are limited on their own, over ten minutes:
///
/// - per user: `perUser` pushes, so that strangers cannot flood the user's phone;
/// - per source address: `perAddress`, across usernames;
/// - per browser (its mark): `perBrowser`.
///
/// A browser the user signed in with before (`SignInStore.knowsBrowser`), a passkey, and the
/// relying parties' own requests are not limited here. Counted per node, in memory, as
/// `FailedAuthenticationThrottle` counts.
struct SignInPushLimits: Sendable {
    static let window: TimeInterval = 600
    static let perUser = 3
    static let perAddress = 10
    static let perBrowser = 3
    /// How long a browser stays the user's after their last sign-in with it.
    static let browserMemory: TimeInterval = 90 * 86_400

    private let users: FailedAuthenticationThrottle
    private let addresses: FailedAuthenticationThrottle
    private let browsers: FailedAuthenticationThrottle

    init(now: @escaping @Sendable () -> Date) {
        users = FailedAuthenticationThrottle(limit: Self.perUser, window: Self.window, now: now)
        addresses = FailedAuthenticationThrottle(limit: Self.perAddress, window: Self.window, now: now)
        browsers = FailedAuthenticationThrottle(limit: Self.perBrowser, window: Self.window, now: now)
    }

    /// Seconds until a push to `userID` for a sign-in from an unknown browser may go; nil when
    /// it may go now, and then it is counted.
    func admit(tenantID: String, userID: String, address: String?, browserHash: Data) -> Int? {
        let keys: [(FailedAuthenticationThrottle, String)] = [
            (users, "\(tenantID):\(userID)"), (browsers, browserHash.base64URLEncodedString),
        ] + (address.map { [(addresses, $0)] } ?? [])
        if let wait = keys.compactMap({ limit, key in limit.retryAfter(key) }).max() { return wait }
        for (limit, key) in keys { limit.recordFailure(key) }
        return nil
    }
}
