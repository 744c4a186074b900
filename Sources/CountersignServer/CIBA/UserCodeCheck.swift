import CountersignCore
import Foundation

/// The `user_code` rule of CIBA §7.1, for clients registered with
/// `backchannel_user_code_parameter`:
///
/// - a user who set a code must be named with it: none is `missing_user_code`, a wrong one
///   `invalid_user_code`, and the right one lets the request through;
/// - a user without a code cannot be checked, so a code sent for them is `invalid_user_code`
///   rather than waved through;
/// - wrong codes are counted per user, whichever client sends them; a right one sets the count
///   back to 0, and the fifth in a row locks the code for 15 minutes. That answer, and every
///   request needing the code until the lock ends (the right code included), is
///   `access_denied` with `Retry-After`: guessing a short code at line speed must not work.
///
/// A client that did not register for the parameter may not send it: the code would be
/// checked by nobody, and the client would believe it had been.
struct UserCodeCheck: Sendable {
    static let failureLimit = 5
    static let lockout: TimeInterval = 900
    /// Longer than any code an administrator can set; a longer value is malformed, not wrong.
    static let maximumLength = 256

    let store: any UserCodeCheckStore
    let sealer: SecretSealer
    let now: @Sendable () -> Date

    /// The code a request of `client` carries.
    static func parameter(_ raw: String?, client: Client) throws(BackchannelAuthenticationError) -> String? {
        guard let raw else { return nil }
        guard client.backchannelUserCodeParameter else { throw .userCodeNotRegistered }
        guard raw.count <= maximumLength else { throw .malformedUserCode }
        return raw
    }

    func verify(_ code: String?, user: User, client: Client) async throws {
        guard client.backchannelUserCodeParameter else { return }
        guard let stored = try await store.code(userID: user.id) else {
            if code != nil { throw BackchannelAuthenticationError.userCodeNotSet }
            return
        }
        let now = now()
        if let until = stored.lockedUntil, until > now {
            throw BackchannelAuthenticationError.userCodeLocked(retryAfter: max(1, Int(until.timeIntervalSince(now).rounded(.up))))
        }
        guard let code else { throw BackchannelAuthenticationError.missingUserCode }
        if Secrets.constantTimeEqual(UserCode.hash(code, userID: user.id, masterKey: sealer.masterKey), stored.hash) {
            try await store.recordSuccess(userID: user.id)
            return
        }
        // Whole milliseconds, as stored: the lock ends exactly `lockout` after this failure.
        let lockUntil = Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1000).rounded(.down) / 1000 + Self.lockout)
        if try await store.recordFailure(
            userID: user.id, tenantID: user.tenantID, byClient: client.id, limit: Self.failureLimit, lockUntil: lockUntil,
            at: now) {
            throw BackchannelAuthenticationError.userCodeLocked(retryAfter: Int(Self.lockout))
        }
        throw BackchannelAuthenticationError.invalidUserCode
    }
}
