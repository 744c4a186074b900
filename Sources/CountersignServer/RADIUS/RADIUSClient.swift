import CountersignRADIUS
import Foundation

/// A gateway or network device of a tenant that asks Countersign, over RADIUS, whether a user may
/// log in: a VPN concentrator, a firewall, a switch. It is known by the networks its requests come
/// from and proves itself with its shared secret, which is stored sealed under the master key
/// (the HMAC needs it in clear) and is never part of this value.
struct RADIUSClient: Sendable, Equatable, Encodable {
    /// How an Access-Request is answered.
    enum Mode: String, Codable, Sendable, CaseIterable {
        /// The request starts an approval on the user's phone; the answer waits for the decision.
        case push
        /// The first request is answered with an Access-Challenge naming the number to pick on the
        /// phone; the request that answers it waits for the decision.
        case pushNumber = "push-number"
        /// User-Password is a one-time code from the user's device, checked at once.
        case passcode
        /// A code in User-Password is checked; an empty one, or `push`, sends a push.
        case auto
    }

    /// What a user who has no enrolled device gets.
    enum UnenrolledUsers: String, Codable, Sendable, CaseIterable {
        case reject
        /// Access-Accept, recorded in the audit log.
        case accept
    }

    var id: String
    var tenantID: String
    var name: String
    /// Where its requests may come from; a request from anywhere else is dropped unanswered.
    var networks: [IPNetwork]
    var mode: Mode
    /// How long an answer waits for the user's decision: under the gateway's own timeout.
    var waitSeconds: Int
    /// `alice@example.com` is looked up as `alice`.
    var stripRealm: Bool
    /// `EXAMPLE\alice` is looked up as `alice`.
    var stripDomain: Bool
    var unenrolledUsers: UnenrolledUsers
    /// What an Access-Accept carries besides Countersign's own Class.
    var replyAttributes: [RADIUSReplyAttribute]
    /// User-Password is the user's password in the tenant's directory, checked by an LDAP bind
    /// before the push (`DirectoryPasswords`); push and push-number modes only.
    var directoryPassword = false
    /// Only members of one of these groups (ids) may log in through it; empty: every user.
    var allowedGroups: [String] = []
    /// What an Access-Accept carries besides, for members of each group, in this order.
    var groupReplyAttributes: [RADIUSGroupReply] = []
    var createdAt: Date
    var updatedAt: Date

    /// The most RADIUS clients a tenant has: every write checks its networks against every
    /// client's, and each node keeps all of them in memory.
    static let maximumPerTenant = 100
    static let defaultWaitSeconds = 20
    static let waitRange = 3...120
    static let maximumNetworks = 64
    static let maximumReplyAttributes = 16
    /// The most groups `allowed_groups` and `group_reply_attributes` each name.
    static let maximumGroups = 50
    /// The longest shared secret accepted, and the shortest: RFC 2865 §3 asks for at least 16
    /// octets, and a guessable secret lets anyone who sees one packet read every password.
    static let secretLengths = 16...128

    /// The name a RADIUS request's User-Name is looked up by, after the client's stripping.
    func username(from sent: String) -> String {
        var name = sent
        if stripDomain, let slash = name.firstIndex(of: "\\") { name = String(name[name.index(after: slash)...]) }
        if stripRealm, let at = name.lastIndex(of: "@") { name = String(name[..<at]) }
        return name
    }

    enum CodingKeys: String, CodingKey {
        case id, name, networks, mode
        case waitSeconds = "wait_seconds"
        case stripRealm = "strip_realm"
        case stripDomain = "strip_domain"
        case unenrolledUsers = "unenrolled_users"
        case replyAttributes = "reply_attributes"
        case directoryPassword = "directory_password"
        case allowedGroups = "allowed_groups"
        case groupReplyAttributes = "group_reply_attributes"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    /// The context its secret is sealed under: a sealed secret copied into another row does not open.
    static func secretContext(_ id: String) -> String { "radius-client-secret:\(id)" }
}

/// Attributes an Access-Accept carries for the members of a group (by the group's id): a Filter-Id
/// or Class that puts VPN users of one group in their own network, say.
struct RADIUSGroupReply: Sendable, Equatable, Codable {
    var group: String
    var attributes: [RADIUSReplyAttribute]
}

/// One attribute an Access-Accept carries for a RADIUS client, by its RFC 2865 name: what a
/// gateway that maps users to groups or policies reads. Only attributes whose value is text or a
/// 32-bit number are offered; Countersign sets Message-Authenticator, Reply-Message and State
/// itself, and Class unless one is given here.
struct RADIUSReplyAttribute: Sendable, Equatable, Codable {
    let name: String
    let value: String

    enum Kind: Sendable { case text, integer }

    static let offered: [String: (type: UInt8, kind: Kind)] = [
        "Service-Type": (6, .integer),
        "Filter-Id": (11, .text),
        "Framed-Route": (22, .text),
        "Class": (RADIUSAttribute.class, .text),
        "Session-Timeout": (27, .integer),
        "Idle-Timeout": (28, .integer),
        "Acct-Interim-Interval": (85, .integer),
        "Framed-Pool": (88, .text),
    ]

    init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Read as given (a number may be written as one): checked by `checked()` where an
    /// administrator wrote it, trusted where Countersign stored it.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        if let number = try? container.decode(UInt32.self, forKey: .value) {
            value = String(number)
        } else {
            value = try container.decode(String.self, forKey: .value)
        }
    }

    /// This attribute if it is offered and its value is of its kind and fits in one attribute.
    func checked() throws(AdminError) -> RADIUSReplyAttribute {
        guard let offered = Self.offered[name] else {
            throw .invalidField(
                "reply_attributes", "\(name) is not offered; use one of \(Self.offered.keys.sorted().joined(separator: ", "))")
        }
        switch offered.kind {
        case .text:
            guard (1...253).contains(value.utf8.count) else {
                throw .invalidField("reply_attributes", "the value of \(name) must be 1 to 253 octets of UTF-8")
            }
        case .integer:
            guard !value.isEmpty, value.allSatisfy({ ("0"..."9").contains($0) }), value == "0" || value.first != "0",
                  UInt32(value) != nil else {
                throw .invalidField("reply_attributes", "the value of \(name) must be a whole number from 0 to 4294967295")
            }
        }
        return self
    }

    enum CodingKeys: String, CodingKey { case name, value }

    /// The attribute as it goes on the wire; nil for one that is not offered (a row altered by hand).
    var attribute: RADIUSAttribute? {
        guard let offered = Self.offered[name] else { return nil }
        switch offered.kind {
        case .text:
            return RADIUSAttribute(type: offered.type, value: Array(value.utf8))
        case .integer:
            guard let number = UInt32(value) else { return nil }
            return RADIUSAttribute(type: offered.type, value: withUnsafeBytes(of: number.bigEndian) { Array($0) })
        }
    }
}
