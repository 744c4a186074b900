import CountersignCore
import Foundation

/// The body of `POST` and `PATCH …/groups`, and the rules of a group's fields: every member
/// optional here, `name` required on creation. Each refusal is `AdminError.invalidField` naming
/// the member and why.
struct GroupRegistration: Decodable, Sendable {
    var name: String?
    /// The provisioning client's own id for the group; on update an empty string removes it.
    var externalID: String?

    enum CodingKeys: String, CodingKey {
        case name
        case externalID = "external_id"
    }

    /// A new group of `tenantID`, kept by its admins (`local`), created at `date`.
    func registered(id: String, tenantID: String, at date: Date) throws(AdminError) -> UserGroup {
        guard let name else { throw .missingField("name") }
        return UserGroup(
            id: id, tenantID: tenantID, name: try Self.name(name),
            externalID: try externalID.map { raw throws(AdminError) in try Self.externalID(raw) }, source: .local,
            sourceID: nil, createdAt: date, updatedAt: date)
    }

    /// `existing` with the fields given applied and checked, updated at `date`. Its source stays:
    /// a directory's or SCIM client's group changed here is still theirs to change back.
    func applied(to existing: UserGroup, at date: Date) throws(AdminError) -> UserGroup {
        var group = existing
        if let name { group.name = try Self.name(name) }
        if let externalID { group.externalID = externalID.isEmpty ? nil : try Self.externalID(externalID) }
        group.updatedAt = date
        return group
    }

    /// Group names: trimmed of white space, then 1–128 characters without control or format
    /// characters. Policies and lists name groups, where one could pass for another.
    static func name(_ raw: String) throws(AdminError) -> String {
        let value = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...128).contains(value.count), !NameCharacters.refuses(value) else {
            throw .invalidField("name", "1 to 128 characters without control or format characters (such as bidirectional overrides)")
        }
        return value
    }

    /// External ids: 1–255 characters (code points, as JSON Schema counts them) without control
    /// or format characters, kept as given.
    static func externalID(_ raw: String) throws(AdminError) -> String {
        guard (1...255).contains(raw.unicodeScalars.count), !NameCharacters.refuses(raw) else {
            throw .invalidField("external_id", "1 to 255 characters without control or format characters")
        }
        return raw
    }
}
