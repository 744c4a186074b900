import CountersignCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What this terminal answered, kept beside its enrollments (`answers.jsonl` in the device
/// store, one JSON object a line), so that a later command can say that a request was already
/// answered here, how and when. The device protocol tells a device only that a request is no
/// longer pending (409 `already_decided`, 410 `approval_expired`), not how or when it was decided.
///
/// Request ids and decisions only: nothing secret, nothing of what the request showed.
struct AnswerLog: Sendable {
    struct Entry: Codable, Sendable {
        let request: String
        let enrollment: String
        /// `approved` or `denied`.
        let status: String
        let reason: DenyReason?
        let decidedAt: Date
        /// The command that answered: `device watch`, `device approve`, `device deny`.
        let command: String

        enum CodingKeys: String, CodingKey {
            case request, enrollment, status, reason, command
            case decidedAt = "decided_at"
        }

        /// "approved here with `device watch` at 2026-12-04T22:01:02Z".
        var sentence: String {
            "\(status)\(reason.map { " (\($0.rawValue))" } ?? "") here with `countersign \(command)` "
                + "at \(Timestamps.format(decidedAt))"
        }
    }

    /// The file, in the device store's directory.
    let path: String

    /// Past this size the oldest half of the lines is dropped: the server forgets decided
    /// requests after a while, and so may the terminal.
    static let sizeLimit = 64 << 10

    init(store: String) {
        path = (store as NSString).appendingPathComponent("answers.jsonl")
    }

    /// Notes an answer the server accepted. A terminal that cannot write its log still answered:
    /// the failure is not the user's concern, and is not reported.
    func record(_ acknowledgement: ApprovalAcknowledgement, enrollment: String, command: String) {
        let entry = Entry(
            request: acknowledgement.requestID, enrollment: enrollment, status: acknowledgement.status,
            reason: acknowledgement.reason, decidedAt: acknowledgement.decidedAt, command: command)
        guard var line = try? Timestamps.encoder().encode(entry) else { return }
        line.append(UInt8(ascii: "\n"))
        trimIfLarge()
        // O_APPEND: two commands answering at once each add whole lines.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// The latest answer given here to `requestID`, if any.
    func entry(for requestID: String) -> Entry? {
        entries().last { $0.request == requestID }
    }

    private func entries() -> [Entry] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let decoder = Timestamps.decoder()
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(Entry.self, from: Data($0)) }
    }

    private func trimIfLarge() {
        guard let data = FileManager.default.contents(atPath: path), data.count > Self.sizeLimit else { return }
        let lines = data.split(separator: UInt8(ascii: "\n"))
        var kept = Data(lines.suffix(lines.count / 2).joined(separator: [UInt8(ascii: "\n")]))
        kept.append(UInt8(ascii: "\n"))
        let temporary = path + ".partial"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        _ = kept.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        rename(temporary, path)
    }
}
