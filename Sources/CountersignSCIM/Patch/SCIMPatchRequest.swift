import Foundation

/// A PATCH body (RFC 7644 §3.5.2): a PatchOp message and its operations, read but not applied.
///
/// Accepts what identity providers send beside the RFC's examples: `op` in any case (Entra ID
/// sends `"Replace"`, `"Add"`, `"Remove"`), and operations without a path whose value is an object
/// of attributes (Okta's `{"op":"replace","value":{"active":false}}`).
///
/// ```swift
/// let patch = try SCIMPatchRequest(parsing: body)
/// let changed = try user.applying(patch)
/// ```
public struct SCIMPatchRequest: Sendable, Hashable {
    public static let schema = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
    /// More operations than any provider sends in one request; a group's members travel as one
    /// operation's array, not as many operations.
    public static let maximumOperations = 1000

    public var operations: [SCIMPatchOperation]

    public init(operations: [SCIMPatchOperation]) {
        self.operations = operations
    }

    public init(parsing data: Data) throws(SCIMError) {
        try self.init(json: SCIMJSON(parsing: data))
    }

    public init(json: SCIMJSON) throws(SCIMError) {
        guard case .object = json else { throw .invalidSyntax("The body must be a JSON object.") }
        guard let schemas = json[caseInsensitive: "schemas"]?.arrayValue,
              schemas.contains(where: { $0.stringValue?.caseInsensitiveCompare(Self.schema) == .orderedSame })
        else {
            throw .invalidSyntax("schemas must list \(Self.schema).")
        }
        guard let operations = json[caseInsensitive: "Operations"]?.arrayValue, !operations.isEmpty else {
            throw .invalidSyntax("Operations must be an array of at least one operation.")
        }
        guard operations.count <= Self.maximumOperations else {
            throw .invalidSyntax("A request may hold at most \(Self.maximumOperations) operations.")
        }
        self.operations = []
        for (index, operation) in operations.enumerated() {
            self.operations.append(try SCIMPatchOperation(json: operation, index: index))
        }
    }
}

/// One PATCH operation, its path parsed.
public struct SCIMPatchOperation: Sendable, Hashable {
    public enum Op: String, Sendable, Hashable {
        case add, remove, replace
    }

    public var op: Op
    /// Nil for an operation on the resource itself, whose value is then an object of attributes.
    public var path: SCIMPatchPath?
    public var value: SCIMJSON?

    public init(op: Op, path: SCIMPatchPath? = nil, value: SCIMJSON? = nil) {
        self.op = op
        self.path = path
        self.value = value
    }

    init(json: SCIMJSON, index: Int) throws(SCIMError) {
        guard case .object = json else { throw .invalidSyntax("Operations[\(index)] must be an object.") }
        guard let name = json[caseInsensitive: "op"]?.stringValue, let op = Op(rawValue: name.lowercased()) else {
            throw .invalidSyntax("Operations[\(index)].op must be \"add\", \"remove\" or \"replace\".")
        }
        self.op = op
        switch json[caseInsensitive: "path"] {
        case nil, .null?: path = nil
        case .string(let text)?: path = try SCIMPatchPath(parsing: text)
        default: throw .invalidPath("Operations[\(index)].path must be a string.")
        }
        switch json[caseInsensitive: "value"] {
        case nil, .null?: value = nil
        case let value?: self.value = value
        }
        switch (op, path, value) {
        case (.remove, nil, _):
            // RFC 7644 §3.5.2.2: a remove must say what it removes.
            throw .noTarget("Operations[\(index)] removes without a path.")
        case (.add, _, nil), (.replace, _, nil):
            throw .invalidSyntax("Operations[\(index)] (\(op.rawValue)) needs a value.")
        case (.add, nil, let value?), (.replace, nil, let value?):
            guard case .object = value else {
                throw .invalidValue("Operations[\(index)] has no path, so its value must be an object of attributes.")
            }
        default:
            break
        }
    }
}
