import CountersignCore
import Foundation

/// `POST /totp/verify`: a relying party checks a one-time code the user read off a device
/// (RFC 6238: HMAC-SHA-1, 6 digits, 30-second steps, one step either side for clock drift).
/// The user is named as at `bc-authorize`; the client authenticates the same way.
///
/// Each step is accepted once per device (a conditional update of the last step used), so a
/// code seen over someone's shoulder is worthless once used. Wrong codes are counted per user:
/// after `failureLimit` in a row, codes are not checked for `lockout`.
struct TOTPVerification: Sendable {
    static let digits = 6
    static let period = 30
    static let failureLimit = 5
    static let lockout: TimeInterval = 900

    let store: any TOTPVerificationStore
    let sealer: SecretSealer
    let userHints: UserHintResolver
    let now: @Sendable () -> Date

    func verify(_ form: FormParameters, client: Client, issuer: Issuer) async throws -> TOTPVerified {
        guard let code = form["code"] else { throw TOTPError.missingCode }
        guard Self.isCode(code) else { throw TOTPError.malformedCode }
        let user = try await userHints.user(for: try UserHint(form), client: client, issuer: issuer)
        return try await check(code, of: user, clientID: client.id, tenantID: issuer.tenant.id)
    }

    /// Checks a code of the right form against every seed of `user`'s devices, counting a wrong
    /// one against the user: `/totp/verify` and the RADIUS passcode modes.
    func check(_ code: String, of user: User, clientID: String, tenantID: String) async throws -> TOTPVerified {
        let now = now()
        guard user.status == .active else { throw ApprovalStartError.userDisabled }
        if let until = user.totpLockedUntil, until > now {
            throw TOTPError.locked(retryAfter: max(1, Int(until.timeIntervalSince(now).rounded(.up))))
        }
        let seeds = try await store.seeds(userID: user.id)
        guard !seeds.isEmpty else { throw TOTPError.noSeed }
        for seed in seeds {
            let secret = try sealer.open(seed.sealed, context: EnrollmentService.totpContext(seed.deviceID))
            let totp = TOTP(secret: secret, digits: Self.digits, period: Self.period)
            guard let step = totp.matchingStep(of: code, at: now),
                  try await store.acceptStep(deviceID: seed.deviceID, step: step) else { continue }
            try await store.recordVerified(
                userID: user.id, deviceID: seed.deviceID, clientID: clientID, tenantID: tenantID, at: now)
            return TOTPVerified(sub: user.id, deviceID: seed.deviceID)
        }
        let lockedUntil = try await store.recordWrongCode(
            userID: user.id, clientID: clientID, tenantID: tenantID, limit: Self.failureLimit,
            lockUntil: now.addingTimeInterval(Self.lockout), at: now)
        if lockedUntil != nil { throw TOTPError.locked(retryAfter: Int(Self.lockout)) }
        throw TOTPError.wrongCode
    }

    /// Whether `code` has the form of a code: exactly `digits` ASCII digits.
    static func isCode(_ code: String) -> Bool {
        code.utf8.count == digits && code.utf8.allSatisfy({ (0x30...0x39).contains($0) })
    }
}

/// A code that checked out: for whom, and which device's seed produced it.
struct TOTPVerified: Encodable, Sendable {
    let verified = true
    let sub: String
    let deviceID: String
    /// RFC 8176: a one-time password.
    let amr = ["otp"]

    enum CodingKeys: String, CodingKey {
        case verified, sub, amr
        case deviceID = "device_id"
    }
}

/// Why a code was refused.
enum TOTPError: OAuthFailure, Equatable {
    case missingCode
    case malformedCode
    case noSeed
    case wrongCode
    case locked(retryAfter: Int)

    var oauthError: OAuthError {
        switch self {
        case .missingCode:
            OAuthError(.invalidRequest, "code is required")
        case .malformedCode:
            OAuthError(.invalidRequest, "code must be \(TOTPVerification.digits) digits")
        case .noSeed:
            OAuthError(.accessDenied, "none of the user's devices holds a TOTP seed")
        case .wrongCode:
            OAuthError(.invalidCode, "the code is wrong, or was already used")
        case .locked(let retryAfter):
            OAuthError(.accessDenied, "too many wrong codes; codes are not checked for \(retryAfter) more seconds",
                       retryAfter: retryAfter)
        }
    }
}
