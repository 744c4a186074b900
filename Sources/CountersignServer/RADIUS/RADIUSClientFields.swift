import Foundation

/// The body of `POST` and `PATCH …/radius-clients`: every member optional here, `name` and
/// `networks` required on creation. An explicit `null` is refused rather than read as absent.
struct RADIUSClientFields: Decodable, Sendable {
    var name: String?
    var networks: [String]?
    var mode: String?
    var waitSeconds: Int?
    var stripRealm: Bool?
    var stripDomain: Bool?
    var unenrolledUsers: String?
    var replyAttributes: [RADIUSReplyAttribute]?
    var directoryPassword: Bool?
    /// Groups by name or id, resolved to ids by the routes (`GroupReferences`).
    var allowedGroups: [String]?
    var groupReplyAttributes: [RADIUSGroupReply]?
    /// A shared secret the gateway already has; without one, Countersign generates one and shows it once.
    var secret: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, networks, mode, secret
        case waitSeconds = "wait_seconds"
        case stripRealm = "strip_realm"
        case stripDomain = "strip_domain"
        case unenrolledUsers = "unenrolled_users"
        case replyAttributes = "reply_attributes"
        case directoryPassword = "directory_password"
        case allowedGroups = "allowed_groups"
        case groupReplyAttributes = "group_reply_attributes"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        for key in CodingKeys.allCases where container.contains(key) {
            guard try container.decodeNil(forKey: key) else { continue }
            throw DecodingError.valueNotFound(
                String.self, .init(codingPath: container.codingPath + [key], debugDescription: "null"))
        }
        name = try container.decodeIfPresent(String.self, forKey: .name)
        networks = try container.decodeIfPresent([String].self, forKey: .networks)
        mode = try container.decodeIfPresent(String.self, forKey: .mode)
        waitSeconds = try container.decodeIfPresent(Int.self, forKey: .waitSeconds)
        stripRealm = try container.decodeIfPresent(Bool.self, forKey: .stripRealm)
        stripDomain = try container.decodeIfPresent(Bool.self, forKey: .stripDomain)
        unenrolledUsers = try container.decodeIfPresent(String.self, forKey: .unenrolledUsers)
        replyAttributes = try container.decodeIfPresent([RADIUSReplyAttribute].self, forKey: .replyAttributes)
        directoryPassword = try container.decodeIfPresent(Bool.self, forKey: .directoryPassword)
        allowedGroups = try container.decodeIfPresent([String].self, forKey: .allowedGroups)
        groupReplyAttributes = try container.decodeIfPresent([RADIUSGroupReply].self, forKey: .groupReplyAttributes)
        secret = try container.decodeIfPresent(String.self, forKey: .secret)
    }

    private static func choice<Choice: RawRepresentable<String> & CaseIterable>(
        _ raw: String, _ field: CodingKeys
    ) throws(AdminError) -> Choice {
        guard let choice = Choice(rawValue: raw) else {
            throw .invalidField(field.rawValue, "must be one of \(Choice.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return choice
    }

    /// A new RADIUS client of `tenantID` from these fields, with the defaults: push mode, a
    /// 20-second wait, names used as sent, users without a device rejected.
    func created(id: String, tenantID: String, at date: Date) throws(AdminError) -> RADIUSClient {
        guard name != nil else { throw .missingField("name") }
        guard networks != nil else { throw .missingField("networks") }
        let draft = RADIUSClient(
            id: id, tenantID: tenantID, name: "", networks: [], mode: .push, waitSeconds: RADIUSClient.defaultWaitSeconds,
            stripRealm: false, stripDomain: false, unenrolledUsers: .reject, replyAttributes: [], createdAt: date,
            updatedAt: date)
        return try applied(to: draft, at: date)
    }

    /// `existing` with the fields given applied and checked.
    func applied(to existing: RADIUSClient, at date: Date) throws(AdminError) -> RADIUSClient {
        var client = existing
        // The name is what the phone shows the user approving a login: the rule of every name
        // shown, which refuses the format characters that could make it read as another.
        if let name { client.name = try AdminFields.name(name) }
        if let networks {
            guard (1...RADIUSClient.maximumNetworks).contains(networks.count) else {
                throw .invalidField("networks", "give 1 to \(RADIUSClient.maximumNetworks) networks")
            }
            var parsed: [IPNetwork] = []
            for text in networks {
                let network: IPNetwork
                do { network = try IPNetwork(text) } catch { throw .invalidField("networks", error.description) }
                if let other = parsed.first(where: { $0.overlaps(network) }) {
                    throw .invalidField("networks", "\(network) overlaps \(other)")
                }
                parsed.append(network)
            }
            client.networks = parsed
        }
        if let mode { client.mode = try Self.choice(mode, .mode) }
        if let waitSeconds {
            guard RADIUSClient.waitRange.contains(waitSeconds) else {
                throw .invalidField(
                    "wait_seconds",
                    "must be \(RADIUSClient.waitRange.lowerBound) to \(RADIUSClient.waitRange.upperBound), under the gateway's own timeout")
            }
            client.waitSeconds = waitSeconds
        }
        if let stripRealm { client.stripRealm = stripRealm }
        if let stripDomain { client.stripDomain = stripDomain }
        if let unenrolledUsers { client.unenrolledUsers = try Self.choice(unenrolledUsers, .unenrolledUsers) }
        if let replyAttributes {
            guard replyAttributes.count <= RADIUSClient.maximumReplyAttributes else {
                throw .invalidField("reply_attributes", "give at most \(RADIUSClient.maximumReplyAttributes)")
            }
            client.replyAttributes = try replyAttributes.map { attribute throws(AdminError) in try attribute.checked() }
        }
        if let directoryPassword { client.directoryPassword = directoryPassword }
        if let allowedGroups {
            guard allowedGroups.count <= RADIUSClient.maximumGroups else {
                throw .invalidField("allowed_groups", "name at most \(RADIUSClient.maximumGroups) groups")
            }
        }
        if let groupReplyAttributes {
            guard groupReplyAttributes.count <= RADIUSClient.maximumGroups else {
                throw .invalidField("group_reply_attributes", "name at most \(RADIUSClient.maximumGroups) groups")
            }
            for reply in groupReplyAttributes {
                guard (1...RADIUSClient.maximumReplyAttributes).contains(reply.attributes.count) else {
                    throw .invalidField(
                        "group_reply_attributes", "give 1 to \(RADIUSClient.maximumReplyAttributes) attributes for \(reply.group)")
                }
                for attribute in reply.attributes {
                    do { _ = try attribute.checked() } catch .invalidField(_, let why) {
                        throw .invalidField("group_reply_attributes", why)
                    } catch { throw error }
                }
            }
        }
        if client.directoryPassword && !(client.mode == .push || client.mode == .pushNumber) {
            throw .invalidField(
                "directory_password",
                "works with the push and push-number modes only: in \(client.mode.rawValue) mode User-Password holds a one-time code")
        }
        try Self.checkSecret(secret)
        client.updatedAt = date
        return client
    }

    /// A secret given by the administrator: 16 to 128 printable ASCII characters, which every
    /// gateway's configuration can hold.
    static func checkSecret(_ secret: String?) throws(AdminError) {
        guard let secret else { return }
        guard RADIUSClient.secretLengths.contains(secret.utf8.count),
              secret.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw .invalidField(
                "secret",
                "must be \(RADIUSClient.secretLengths.lowerBound) to \(RADIUSClient.secretLengths.upperBound) printable ASCII characters without spaces")
        }
    }

    /// A new shared secret: 32 characters from 24 random octets.
    static func generatedSecret() -> String {
        Secrets.randomBytes(24).base64URLEncodedString
    }
}
