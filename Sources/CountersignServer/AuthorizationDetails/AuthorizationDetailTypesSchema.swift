import CountersignCore
import Foundation

/// The JSON form of `AuthorizationDetailTypes`: parsed strictly from what an administrator
/// sends (every mistake is a 400 naming the member at fault), and written back canonically for
/// storage and for `GET`.
extension AuthorizationDetailTypes {
    /// Parses and checks a registry an administrator sent. Member names and kinds are exact;
    /// anything unknown is refused rather than ignored, so that a misspelt `max_length` does
    /// not silently leave a field unbounded.
    public init(schema json: JSONValue) throws(AdminError) {
        guard case .object(let members) = json else { throw .invalidField("types", "the body must be a JSON object") }
        if let unknown = members.keys.first(where: { $0 != "types" }) {
            throw .invalidField(unknown, "is not a member of the registry; send {\"types\": {…}}")
        }
        guard let typesValue = members["types"] else { throw .missingField("types") }
        guard case .object(let entries) = typesValue else {
            throw .invalidField("types", "must be an object of type names to type definitions")
        }
        guard entries.count <= Self.maximumTypes else {
            throw .invalidField("types", "at most \(Self.maximumTypes) types")
        }
        var types: [String: AuthorizationDetailType] = [:]
        for (name, definition) in entries {
            let path = "types.\(name)"
            guard Self.isName(name) else {
                throw .invalidField(path, "a type name is 1 to \(Self.maximumNameLength) printable ASCII characters without spaces")
            }
            guard case .object(let typeMembers) = definition else { throw .invalidField(path, "must be an object") }
            if let unknown = typeMembers.keys.first(where: { $0 != "fields" }) {
                throw .invalidField("\(path).\(unknown)", "is not a member of a type definition")
            }
            guard let fields = typeMembers["fields"] else { throw .missingField("\(path).fields") }
            types[name] = AuthorizationDetailType(
                name: name, fields: try Self.fields(fields, path: "\(path).fields", depth: 0))
        }
        self.init(types: types)
    }

    private static func fields(_ json: JSONValue, path: String, depth: Int) throws(AdminError) -> AuthorizationDetailFields {
        guard case .object(let entries) = json else { throw .invalidField(path, "must be an object of field names to fields") }
        guard entries.count <= maximumFields else { throw .invalidField(path, "at most \(maximumFields) fields") }
        var fields: [String: AuthorizationDetailField] = [:]
        for (name, definition) in entries {
            let fieldPath = "\(path).\(name)"
            guard isName(name) else {
                throw .invalidField(fieldPath, "a field name is 1 to \(maximumNameLength) printable ASCII characters without spaces")
            }
            guard name != "type" else { throw .invalidField(fieldPath, "type is the element's type, not a field") }
            let field = try Self.field(definition, path: fieldPath, depth: depth)
            if depth == 0, let kind = commonFields[name], field.kind.name != kind {
                throw .invalidField(fieldPath, "\(name) is a common field of RFC 9396 and must be of kind \(kind)")
            }
            fields[name] = field
        }
        return AuthorizationDetailFields(fields: fields)
    }

    private static func field(_ json: JSONValue, path: String, depth: Int) throws(AdminError) -> AuthorizationDetailField {
        guard case .object(let members) = json else { throw .invalidField(path, "must be an object with a kind") }
        guard case .string(let kindName)? = members["kind"] else { throw .missingField("\(path).kind") }
        let allowed: Set<String> = switch kindName {
        case "string", "string_array": ["kind", "required", "max_length"]
        case "object": ["kind", "required", "fields"]
        default: ["kind", "required"]
        }
        if let unknown = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw .invalidField("\(path).\(unknown)", "is not a member of a field of kind \(kindName)")
        }
        var required = false
        if let value = members["required"] {
            guard case .bool(let flag) = value else { throw .invalidField("\(path).required", "must be true or false") }
            required = flag
        }
        let kind: AuthorizationDetailField.Kind
        switch kindName {
        case "string": kind = .string(maxLength: try maxLength(members["max_length"], path: path))
        case "string_array": kind = .stringArray(maxLength: try maxLength(members["max_length"], path: path))
        case "amount": kind = .amount
        case "currency": kind = .currency
        case "number": kind = .number
        case "boolean": kind = .boolean
        case "object":
            guard depth < maximumDepth else { throw .invalidField(path, "objects nest at most \(maximumDepth) levels deep") }
            guard let nested = members["fields"] else { throw .missingField("\(path).fields") }
            let nestedFields = try Self.fields(nested, path: "\(path).fields", depth: depth + 1)
            guard !nestedFields.fields.isEmpty else {
                throw .invalidField("\(path).fields", "an object declares at least one field")
            }
            kind = .object(nestedFields)
        default:
            throw .invalidField("\(path).kind", "must be one of string, amount, currency, number, boolean, string_array, object")
        }
        return AuthorizationDetailField(kind: kind, required: required)
    }

    private static func maxLength(_ value: JSONValue?, path: String) throws(AdminError) -> Int? {
        guard let value else { return nil }
        guard case .integer(let length) = value, (1...Int64(maximumStringLength)).contains(length) else {
            throw .invalidField("\(path).max_length", "must be a whole number from 1 to \(maximumStringLength)")
        }
        return Int(length)
    }

    private static func isName(_ name: String) -> Bool {
        (1...maximumNameLength).contains(name.unicodeScalars.count)
            && name.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) }
    }

    /// The registry as JSON, in the form `init(schema:)` reads.
    public var schema: JSONValue {
        .object(["types": .object(types.mapValues { .object(["fields": Self.json($0.fields)]) })])
    }

    private static func json(_ fields: AuthorizationDetailFields) -> JSONValue {
        .object(fields.fields.mapValues { field in
            var members: [String: JSONValue] = ["kind": .string(field.kind.name)]
            if field.required { members["required"] = .bool(true) }
            switch field.kind {
            case .string(let maxLength?), .stringArray(let maxLength?): members["max_length"] = .integer(Int64(maxLength))
            case .object(let nested): members["fields"] = json(nested)
            default: break
            }
            return .object(members)
        })
    }
}

extension AuthorizationDetailTypes: Codable {
    public init(from decoder: any Decoder) throws {
        self = try Self(schema: try JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try schema.encode(to: encoder)
    }
}
