import ArgumentParser
import CountersignCommandLine
import CountersignKit
import Foundation

/// Users with one enrolled device each that holds a TOTP seed (CountersignKit, file key store),
/// for the RADIUS passcode runs. The server accepts each 30-second step once per device, and a
/// code one step early or late: a device gives at most three accepted codes in one step.
struct TOTPHolders: Sendable {
    struct Holder: Sendable {
        let username: String
        let enrollment: Enrollment
    }

    let holders: [Holder]
    let authenticator: CountersignAuthenticator

    /// Enrolls `count` users, `concurrency` at a time; the tenant must offer TOTP.
    static func enroll(
        _ count: Int, admin: AdminAPIClient, transport: any HTTPTransport, scratch: URL, concurrency: Int = 8
    ) async throws -> TOTPHolders {
        let run = UUID().uuidString.prefix(8).lowercased()
        let authenticator = CountersignAuthenticator(
            keyStore: FileKeyStore(root: scratch.appendingPathComponent("totp-devices")), transport: transport)
        let holders = try await withThrowingTaskGroup(of: [(Int, Holder)].self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var made: [(Int, Holder)] = []
                    for index in stride(from: worker, to: count, by: concurrency) {
                        let username = "radius-\(run)-\(index)"
                        let user = try await admin.send("POST", "/admin/v1/tenants/default/users", body: ["username": username])
                        guard let userID = (user as? [String: Any])?["id"] as? String else { throw ValidationError("no user id") }
                        let ticket = try await admin.send("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets")
                        guard let uri = (ticket as? [String: Any])?["enrollment_uri"] as? String else {
                            throw ValidationError("no enrollment ticket")
                        }
                        let enrollment = try await authenticator.enroll(
                            uri: uri, deviceName: "radius bench \(index)", platform: .linux, factors: EnrollmentFactors(totp: true))
                        made.append((index, Holder(username: username, enrollment: enrollment)))
                    }
                    return made
                }
            }
            return try await group.reduce(into: [(Int, Holder)]()) { $0 += $1 }.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return TOTPHolders(holders: holders, authenticator: authenticator)
    }

    /// Each holder's codes for the steps `steps`, in that order, as its device shows them.
    func codes(_ range: Range<Int>, steps: [Int64]) async throws -> [[String]] {
        var codes: [[String]] = []
        for holder in holders[range] {
            var mine: [String] = []
            for step in steps {
                let date = Date(timeIntervalSince1970: Double(step) * Double(RADIUSBench.period))
                mine.append(try await authenticator.oneTimeCode(holder.enrollment.id, at: date).code)
            }
            codes.append(mine)
        }
        return codes
    }
}
