/// Why a SCIM request was refused: each case is one `scimType` of RFC 7644 §3.12, with HTTP 400.
///
/// The detail names what was wrong (the attribute, the position in a filter) because an identity
/// provider's administrator reads it in a provisioning log, far from Countersign's own logs.
public enum SCIMError: Error, Sendable, Equatable {
    /// A filter that is not in RFC 7644 §3.4.2.2's grammar, with the byte offset where it stopped
    /// making sense.
    case invalidFilter(offset: Int, reason: String)
    /// A well-formed filter that Countersign's storage cannot answer (`SCIMStoreQuery`).
    case unsupportedFilter(String)
    /// A body that is not JSON, or not the message it should be (a PatchOp without `Operations`).
    case invalidSyntax(String)
    /// A PATCH path that is not an attribute path, or names what cannot be patched that way.
    case invalidPath(String)
    /// A PATCH path or filter that selects nothing where something must be selected.
    case noTarget(String)
    /// A value of the wrong type, or a required attribute missing.
    case invalidValue(String)
    /// A change to an attribute whose mutability forbids it (`id`, `meta`, a user's `groups`).
    case mutability(String)

    /// The `scimType` member of the error document.
    public var scimType: String {
        switch self {
        case .invalidFilter, .unsupportedFilter: "invalidFilter"
        case .invalidSyntax: "invalidSyntax"
        case .invalidPath: "invalidPath"
        case .noTarget: "noTarget"
        case .invalidValue: "invalidValue"
        case .mutability: "mutability"
        }
    }

    /// Every case is a client error (RFC 7644 §3.12 puts all of these under 400).
    public var status: Int { 400 }

    public var detail: String {
        switch self {
        case .invalidFilter(let offset, let reason): "The filter is not valid at byte \(offset): \(reason)."
        case .unsupportedFilter(let detail), .invalidSyntax(let detail), .invalidPath(let detail),
             .noTarget(let detail), .invalidValue(let detail), .mutability(let detail):
            detail
        }
    }

    /// The error as the body of the response.
    public var document: SCIMErrorDocument {
        SCIMErrorDocument(status: status, scimType: scimType, detail: detail)
    }
}

/// An error response's body (RFC 7644 §3.12), for the errors above and for those only the server
/// knows (404 for an unknown id, 409 `uniqueness`, 412 for a stale `If-Match`).
///
/// ```swift
/// SCIMErrorDocument(status: 404, detail: "No user has the id 2819c223.").json
/// // {"detail":"No user has the id 2819c223.","schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"404"}
/// ```
public struct SCIMErrorDocument: Sendable, Equatable {
    public static let schema = "urn:ietf:params:scim:api:messages:2.0:Error"

    public var status: Int
    public var scimType: String?
    public var detail: String?

    public init(status: Int, scimType: String? = nil, detail: String? = nil) {
        self.status = status
        self.scimType = scimType
        self.detail = detail
    }

    /// `status` is written as a string: RFC 7644 §3.12 says so, and clients built on its examples
    /// (Entra ID's among them) read it as one.
    public var json: SCIMJSON {
        var members: [String: SCIMJSON] = ["schemas": [.string(Self.schema)], "status": .string(String(status))]
        if let scimType { members["scimType"] = .string(scimType) }
        if let detail { members["detail"] = .string(detail) }
        return .object(members)
    }
}
