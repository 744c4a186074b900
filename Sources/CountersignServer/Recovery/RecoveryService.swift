import CountersignCore
import Foundation

/// Recovery without the phone (docs/recovery.md): the user's recovery codes, the passes an
/// administrator issues, and the check of what someone types at `/account/recover`.
///
/// What either signs in to is a session that answers no client and reaches only the account
/// page's enrollment of a phone or a passkey (`AuthenticationContext.isRecovery`): recovery
/// never unlocks more than its own low assurance.
///
/// Wrong tries are counted in the database, against the username typed (whether or not it
/// exists) and the address: 5 per username and 20 per address in 15 minutes. A try is counted
/// before its hash and taken back when it was right, so tries sent at once cannot pass the
/// limit. The check costs one slow hash (`RecoveryHash`) whatever was found, so the answer's
/// time says nothing either.
struct RecoveryService: Sendable {
    let store: any RecoveryStore
    let now: @Sendable () -> Date
    var metrics: ServerMetrics? = nil
    /// Wrong tries older than the window are deleted at most once an hour per node, by the
    /// check that comes first.
    let housekeeping = PeriodicSchedule(every: 3600)

    /// Codes in a set, and groups of four characters in a code (60 bits) and in a pass (80 bits).
    static let codeCount = 10
    static let codeGroups = 3
    static let passGroups = 4
    static let failureWindow: TimeInterval = 900
    static let failuresPerUsername = 5
    static let failuresPerAddress = 20
    /// How long a session signed in by recovery lasts, at most.
    static let sessionLifetime = 900

    /// A pass lasts from 1 hour to 30 days.
    static let passLifetimes: ClosedRange<Int> = 3600...(30 * 86_400)

    // MARK: - Codes

    /// A new set of codes for the user, replacing any earlier one; the codes are returned once.
    func createCodes(for user: User, actor: String) async throws -> [RecoverySecret] {
        var secrets: [RecoverySecret] = []
        var lookups: Set<String> = []
        while secrets.count < Self.codeCount {
            let secret = RecoverySecret.generate(groups: Self.codeGroups)
            if lookups.insert(secret.lookup).inserted { secrets.append(secret) }
        }
        let date = now()
        // Hashed side by side: the hash pool has a thread per core.
        let codes = try await withThrowingTaskGroup(of: NewRecoveryCode.self) { group in
            for secret in secrets {
                group.addTask {
                    NewRecoveryCode(id: Identifier.make("rcv", at: date), lookup: secret.lookup,
                                    verifier: try await RecoveryHash.make(secret))
                }
            }
            return try await group.reduce(into: [NewRecoveryCode]()) { $0.append($1) }
        }
        try await store.replaceCodes(
            codes, setID: Identifier.make("rcs", at: date), userID: user.id, tenantID: user.tenantID, actor: actor, at: date)
        return secrets
    }

    // MARK: - Passes

    /// What an administrator asks for in a pass.
    struct PassRequest: Sendable {
        var startsAt: Date?
        var lifetimeSeconds: Int
        var oneTime: Bool
        var allowedNetworks: [IPNetwork]
    }

    /// Issues a pass for the user; the pass is returned once.
    func issuePass(for user: User, _ request: PassRequest, actor: String) async throws -> (TemporaryAccessPass, RecoverySecret) {
        let date = now()
        let secret = RecoverySecret.generate(groups: Self.passGroups)
        // To the millisecond, as stored: a pass read back at once is active, not scheduled.
        let asked = max(request.startsAt ?? date, date).timeIntervalSince1970
        let startsAt = Date(timeIntervalSince1970: (asked * 1000).rounded(.down) / 1000)
        let pass = TemporaryAccessPass(
            id: Identifier.make("tap", at: date), tenantID: user.tenantID, userID: user.id, startsAt: startsAt,
            expiresAt: startsAt.addingTimeInterval(TimeInterval(request.lifetimeSeconds)), oneTime: request.oneTime,
            allowedNetworks: request.allowedNetworks.map(\.description), createdBy: actor, createdAt: date, usedAt: nil,
            uses: 0, revokedAt: nil)
        try await store.issuePass(pass, lookup: secret.lookup, verifier: try await RecoveryHash.make(secret))
        return (pass, secret)
    }

    // MARK: - The check

    enum Outcome: Sendable, Equatable {
        case signedIn(SessionAuthenticator, AuthenticationContext)
        /// Not a code or a pass of this user (or no such user): `triesLeft` more before the wait.
        case refused(triesLeft: Int)
        /// Neither a code's nor a pass's shape; nothing was counted.
        case malformed
        /// Too many wrong tries: seconds to wait.
        case throttled(retryAfter: Int)
        /// The right pass, from an address outside its networks.
        case outsideNetworks

        /// As the metric names it.
        var label: String {
            switch self {
            case .signedIn: "signed_in"
            case .refused: "refused"
            case .malformed: "malformed"
            case .throttled: "throttled"
            case .outsideNetworks: "outside_networks"
            }
        }
    }

    /// Checks what was typed for `username` (`user`, if it exists in the tenant) from `address`.
    func check(_ typed: String, username: String, user: User?, tenantID: String, address: String?) async throws -> Outcome {
        let outcome = try await checked(typed, username: username, user: user, tenantID: tenantID, address: address)
        let kind = RecoverySecret(typed: typed, groups: Self.codeGroups) != nil ? "code"
            : RecoverySecret(typed: typed, groups: Self.passGroups) != nil ? "pass" : "unknown"
        metrics?.recoveryChecked(kind, outcome: outcome.label)
        return outcome
    }

    private func checked(_ typed: String, username: String, user: User?, tenantID: String, address: String?) async throws -> Outcome {
        let date = now()
        if housekeeping.isDue(at: date) { try await store.purgeFailures(before: date.addingTimeInterval(-Self.failureWindow)) }
        let code = RecoverySecret(typed: typed, groups: Self.codeGroups)
        let pass = code == nil ? RecoverySecret(typed: typed, groups: Self.passGroups) : nil
        guard let secret = code ?? pass else { return .malformed }

        // The try is counted before it is checked, and only then are the tries counted: of many
        // sent at once, no more than the limit get to the hash. A right one is taken back.
        let usernameSubject = "user:" + username.lowercased()
        let addressSubject = address.map { "address:" + $0 }
        let subjects = [usernameSubject] + (addressSubject.map { [$0] } ?? [])
        let counted = try await store.recordTry(tenantID: tenantID, subjects: subjects, at: date)
        let tries = try await store.failures(
            tenantID: tenantID, subjects: subjects, since: date.addingTimeInterval(-Self.failureWindow))
        let byUsername = tries[usernameSubject] ?? []
        let byAddress = addressSubject.flatMap { tries[$0] } ?? []
        func wait(_ times: [Date], limit: Int) -> Int? {
            guard times.count > limit, let oldest = times.first else { return nil }
            // To the nearest second: times are stored to the millisecond, so a wait of exactly
            // the window may read as a fraction over it.
            return max(1, Int((oldest.addingTimeInterval(Self.failureWindow).timeIntervalSince(date)).rounded()))
        }
        if let seconds = [wait(byUsername, limit: Self.failuresPerUsername), wait(byAddress, limit: Self.failuresPerAddress)]
            .compactMap({ $0 }).max() {
            try await store.forgetTries(counted)
            return .throttled(retryAfter: seconds)
        }
        let active = user.flatMap { $0.status == .active ? $0 : nil }

        if code != nil {
            let stored = try await active.asyncMap { try await store.unusedCode(lookup: secret.lookup, userID: $0.id) } ?? nil
            if try await RecoveryHash.matches(secret, stored?.verifier), let stored, let active,
               try await store.useCode(stored, username: active.username, from: address, at: date) {
                try await store.forgetTries(counted)
                return .signedIn(.recoveryCode(stored.id), .recoveryCode)
            }
        } else {
            let candidates = try await active.asyncMap { try await store.usablePasses(lookup: secret.lookup, userID: $0.id, at: date) } ?? []
            // Lookups of a user's passes rarely collide; each candidate costs a hash.
            var matched: TemporaryAccessPass?
            if candidates.isEmpty {
                _ = try await RecoveryHash.matches(secret, nil)
            }
            for (candidate, verifier) in candidates where matched == nil {
                if try await RecoveryHash.matches(secret, verifier) { matched = candidate }
            }
            if let matched, let active {
                guard Self.admits(address, matched.allowedNetworks) else {
                    try await store.forgetTries(counted)
                    return .outsideNetworks
                }
                if try await store.usePass(matched, username: active.username, from: address, at: date) {
                    try await store.forgetTries(counted)
                    return .signedIn(.temporaryAccessPass(matched.id), .temporaryAccessPass(oneTime: matched.oneTime))
                }
            }
        }
        return .refused(triesLeft: max(0, Self.failuresPerUsername - byUsername.count))
    }

    /// Whether `address` is in one of `networks` (any address when there are none).
    static func admits(_ address: String?, _ networks: [String]) -> Bool {
        guard !networks.isEmpty else { return true }
        guard let address, let octets = IPNetwork.address(address) else { return false }
        return networks.contains { (try? IPNetwork($0))?.contains(octets) == true }
    }
}

extension Optional {
    /// The value mapped by an asynchronous transform, or nil.
    fileprivate func asyncMap<Mapped>(_ transform: (Wrapped) async throws -> Mapped) async rethrows -> Mapped? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
