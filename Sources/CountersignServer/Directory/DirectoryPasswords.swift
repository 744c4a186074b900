import CountersignCore
import CountersignLDAP
import Foundation
import Logging

/// The directory password as a first factor: a client's hosted sign-in, or a RADIUS client,
/// that requires it checks the user's password in the tenant's directory before it sends the
/// request to the phone.
///
/// The password is checked by an LDAP bind as the user, on a connection of its own; it is never
/// stored, logged or kept past the check. The person the directory finds must be the user the
/// push goes to: a user the directory keeps (`User.Source.directory`) whose stable id is the one
/// the user search returns for the username. A local user of the same name, whom no sync has
/// adopted yet, is refused: their phone is no proof of the directory account.
///
/// An unknown username, a user of another source, a disabled user and a wrong password all get
/// `refused`, after the same directory round trips (a search, then a bind), and each counts
/// against the username and the address it came from. Past the
/// limits the check is `throttled` without asking the directory, whatever the password: a right
/// password must not pass while a guesser is being held back, or passing would tell them which
/// guess was right.
final class DirectoryPasswords: Sendable {
    enum Outcome: Sendable, Equatable {
        case verified
        /// Wrong password, unknown user, or not the directory's user: one answer for all.
        case refused
        /// Too many failures for the username or the address; after `retryAfter` seconds.
        case throttled(retryAfter: Int)
        /// The tenant has no directory, or it could not be asked: nothing was checked.
        case unavailable
    }

    /// Failures per username within `window`, and per address: an address may be a NAT many
    /// people share, so it is allowed more.
    static let failuresPerUser = 10
    static let failuresPerAddress = 50
    static let window: TimeInterval = 15 * 60
    /// A password longer than any directory takes is refused without a bind.
    static let maximumLength = 1024

    let database: any Database
    let directories: any DirectoryRepository
    let sync: DirectorySync
    let metrics: ServerMetrics?
    let logger: Logger
    private let perUser: FailedAuthenticationThrottle
    private let perAddress: FailedAuthenticationThrottle

    init(database: any Database, directories: any DirectoryRepository, sync: DirectorySync, metrics: ServerMetrics?,
         logger: Logger, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.directories = directories
        self.sync = sync
        self.metrics = metrics
        self.logger = logger
        perUser = FailedAuthenticationThrottle(limit: Self.failuresPerUser, window: Self.window, now: now)
        perAddress = FailedAuthenticationThrottle(limit: Self.failuresPerAddress, window: Self.window, now: now)
    }

    /// Whether `password` is the directory password of `user`, whom the request named as
    /// `username` (nil when the tenant has no such user, or they are disabled), from `address`.
    func verify(_ password: String, username: String, user: User?, tenantID: String, address: String?) async -> Outcome {
        let outcome = await check(password, username: username, user: user, tenantID: tenantID, address: address)
        metrics?.directoryPasswordChecked(outcome.label)
        return outcome
    }

    private func check(_ password: String, username: String, user: User?, tenantID: String, address: String?) async -> Outcome {
        let userKey = "\(tenantID):\(username.lowercased())"
        let addressKey = address.map { "\(tenantID):\($0)" }
        let waits = [perUser.retryAfter(userKey), addressKey.flatMap(perAddress.retryAfter)].compactMap { $0 }
        if let wait = waits.max() { return .throttled(retryAfter: wait) }
        func refused(_ why: String) -> Outcome {
            perUser.recordFailure(userKey)
            if let addressKey { perAddress.recordFailure(addressKey) }
            logger.info("directory password refused", metadata: [
                "tenant": "\(tenantID)", "username": "\(username)", "why": "\(why)"])
            return .refused
        }
        guard !password.isEmpty else { return refused("no password") }
        guard password.utf8.count <= Self.maximumLength else { return refused("longer than \(Self.maximumLength) octets") }
        let directory: Directory
        let client: LDAPClient
        do {
            guard try await directories.find(tenantID: tenantID, on: database) != nil else {
                logger.error("a client requires the directory password, and the tenant has no directory",
                             metadata: ["tenant": "\(tenantID)"])
                return .unavailable
            }
            (directory, client) = try await sync.client(tenantID: tenantID)
        } catch {
            logger.error("the directory could not be asked for a password check",
                         metadata: ["tenant": "\(tenantID)", "error": "\(error)"])
            return .unavailable
        }
        do {
            let attributes = directory.attributes
            let filter = LDAPFilter.and([LDAPFilter(directory.userFilter), .equality(attributes.username, username)])
            let entries = try await client.search(
                base: directory.userBaseDN, filter: filter, attributes: [attributes.id], pageSize: 2)
            // A bind is made whatever is found, so that an unknown username takes as long to
            // refuse as a wrong password: the time would otherwise tell which usernames exist.
            // Without one entry, the DN bound is one that cannot exist, and the answer is ignored.
            let entry = entries.count == 1 ? entries.first : nil
            let bound: Bool
            if let entry {
                bound = try await client.verifyPassword(dn: entry.dn, password: password)
            } else {
                // Whatever the directory answers for a DN that does not exist, the answer is no.
                _ = try? await client.verifyPassword(dn: "cn=\(UUID().uuidString),\(directory.userBaseDN)", password: password)
                bound = false
            }
            guard let entry else { return refused(entries.isEmpty ? "not in the directory" : "the directory has several") }
            guard let user, user.status == .active, user.source == .directory,
                  let id = DirectorySnapshot.stableID(of: entry, attribute: attributes.id), user.sourceID == id else {
                return refused("not the directory's user of that name, or disabled")
            }
            return bound ? .verified : refused("wrong password")
        } catch {
            logger.error("the directory could not be asked for a password check",
                         metadata: ["tenant": "\(tenantID)", "error": "\(error)"])
            return .unavailable
        }
    }
}

extension DirectoryPasswords.Outcome {
    /// The outcome as a metric label.
    var label: String {
        switch self {
        case .verified: "verified"
        case .refused: "refused"
        case .throttled: "throttled"
        case .unavailable: "unavailable"
        }
    }
}
