import CountersignCore
import Foundation

/// `authorization_details` (RFC 9396) as checked: a non-empty JSON array of objects, each of a
/// type the tenant registered and the client may request, each field allowed by that type and
/// of its kind. Only a value of this type reaches the device, the database and the tokens.
///
/// ```swift
/// let details = try AuthorizationDetails(
///     parameter: #"[{"type":"payment_initiation", …}]"#, allowedTypes: client.authorizationDetailsTypes,
///     registry: tenant.authorizationDetailTypes)
/// ```
struct AuthorizationDetails: Sendable, Equatable {
    /// The largest parameter accepted, in UTF-8 bytes: what one push payload and one screen can
    /// reasonably carry.
    static let maximumSize = 8192
    /// The parameter, token response member, access token claim and introspection member (RFC 9396).
    static let claim = "authorization_details"

    let elements: [JSONValue]

    /// The details as one JSON array.
    var json: JSONValue { .array(elements) }

    /// The types of the elements, in order, without repetition.
    var types: [String] {
        var seen = Set<String>()
        return elements.compactMap { $0["type"]?.stringValue }.filter { seen.insert($0).inserted }
    }

    /// Parses the parameter (form: JSON text; signed request: the claim, already parsed with
    /// the JWT) and checks every element against `registry`, for a client allowed `allowedTypes`.
    init(parameter: AuthorizationDetailsParameter, allowedTypes: [String], registry: AuthorizationDetailTypes)
        throws(AuthorizationDetailsError) {
        let value: JSONValue
        switch parameter {
        case .text(let text):
            guard text.utf8.count <= Self.maximumSize else { throw .tooLarge(limit: Self.maximumSize) }
            do { value = try JSONValue(parsing: Data(text.utf8)) } catch {
                throw error.kind == .syntax ? .notJSON(error.reason) : .unsupportedJSON(path: error.path, error.reason)
            }
        case .json(let json):
            guard json.canonicalData.count <= Self.maximumSize else { throw .tooLarge(limit: Self.maximumSize) }
            value = json
        }
        guard case .array(let elements) = value else { throw .notArray }
        guard !elements.isEmpty else { throw .empty }
        for (index, element) in elements.enumerated() {
            guard case .object(let members) = element else { throw .elementNotObject(index: index) }
            guard case .string(let name)? = members["type"] else { throw .missingType(index: index) }
            guard let type = registry.type(named: name) else { throw .unknownType(index: index, name) }
            guard allowedTypes.contains(name) else { throw .typeNotAllowed(index: index, name) }
            var fields = members
            fields["type"] = nil
            try Self.check(fields, against: type.fields, prefix: "", index: index)
        }
        self.elements = elements
    }

    /// Details read back from storage, where only checked details were written.
    init(stored text: String) throws {
        guard case .array(let elements) = try JSONValue(parsing: Data(text.utf8)) else {
            throw StorageError.corrupt("authorization_details")
        }
        self.elements = elements
    }

    init(elements: [JSONValue]) {
        self.elements = elements
    }

    private static func check(_ members: [String: JSONValue], against schema: AuthorizationDetailFields, prefix: String,
                              index: Int) throws(AuthorizationDetailsError) {
        if let unknown = members.keys.sorted().first(where: { schema.fields[$0] == nil }) {
            throw .fieldNotAllowed(index: index, path: prefix + unknown)
        }
        for name in schema.fields.keys.sorted() {
            let field = schema.fields[name]!
            let path = prefix + name
            guard let value = members[name] else {
                if field.required { throw .missingField(index: index, path: path) }
                continue
            }
            try check(value, as: field.kind, path: path, index: index)
        }
    }

    private static func check(_ value: JSONValue, as kind: AuthorizationDetailField.Kind, path: String,
                              index: Int) throws(AuthorizationDetailsError) {
        switch (kind, value) {
        case (.string(let maxLength), .string(let text)):
            if let why = textProblem(text, maxLength: maxLength) { throw .invalidField(index: index, path: path, why) }
        case (.stringArray(let maxLength), .array(let items)):
            for (position, item) in items.enumerated() {
                guard case .string(let text) = item else {
                    throw .invalidField(index: index, path: "\(path)[\(position)]", "must be a string")
                }
                if let why = textProblem(text, maxLength: maxLength) {
                    throw .invalidField(index: index, path: "\(path)[\(position)]", why)
                }
            }
        case (.amount, .string(let text)):
            guard isAmount(text) else {
                throw .invalidField(index: index, path: path, "must be a decimal amount in a string, such as \"123.50\"")
            }
        case (.currency, .string(let text)):
            guard text.utf8.count == 3, text.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
                throw .invalidField(index: index, path: path, "must be an ISO 4217 currency code of three upper-case letters")
            }
        case (.number, .integer), (.boolean, .bool):
            return
        case (.object(let nested), .object(let members)):
            try check(members, against: nested, prefix: path + ".", index: index)
        default:
            throw .invalidField(index: index, path: path, "must be \(kind.expectation)")
        }
    }

    /// Why `text` may not be shown as it is, or nil. Control, format and line-separator
    /// characters are refused: a bidirectional override could make "DE02…" read as another
    /// account on the device than the one signed.
    private static func textProblem(_ text: String, maxLength: Int?) -> String? {
        if let maxLength, text.unicodeScalars.count > maxLength { return "is longer than \(maxLength) characters" }
        let refused = text.unicodeScalars.contains { scalar in
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned: true
            default: false
            }
        }
        return refused ? "holds control or formatting characters" : nil
    }

    /// Up to 18 integer digits without leading zeros, then optionally a point and 1 to 5 digits
    /// (the precision of ISO 20022 amounts).
    static func isAmount(_ text: String) -> Bool {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        guard (1...18).contains(whole.count), whole.allSatisfy(\.isASCIIDigit),
              whole == "0" || whole.first != "0" else { return false }
        guard parts.count == 2 else { return true }
        return (1...5).contains(parts[1].count) && parts[1].allSatisfy(\.isASCIIDigit)
    }
}

extension AuthorizationDetailField.Kind {
    /// What a value of this kind is, for an error description.
    var expectation: String {
        switch self {
        case .string: "a string"
        case .amount: "a decimal amount in a string, such as \"123.50\""
        case .currency: "an ISO 4217 currency code"
        case .number: "a whole number"
        case .boolean: "true or false"
        case .stringArray: "an array of strings"
        case .object: "a JSON object"
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

/// `authorization_details` as a request carries it: JSON text in a form body, or a JSON value
/// among the claims of a signed request.
enum AuthorizationDetailsParameter: Sendable, Equatable {
    case text(String)
    case json(JSONValue)
}
