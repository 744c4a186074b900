import CountersignCore

/// An authorization detail type a tenant accepts in `authorization_details` (RFC 9396 §2): its
/// name, the `type` value, and the fields an object of the type may hold.
///
/// RFC 9396 leaves the content of each type to the server that defines it; Countersign lets the
/// tenant declare it, so that an object is checked field by field before a user is ever asked.
/// What the device shows and signs is then only what the tenant meant to be shown.
public struct AuthorizationDetailType: Sendable, Equatable {
    public var name: String
    public var fields: AuthorizationDetailFields
}

/// The fields of an object: of an authorization detail's top level, or of an `object` field.
/// A field not named here is refused.
public struct AuthorizationDetailFields: Sendable, Equatable {
    public var fields: [String: AuthorizationDetailField]
}

/// One field of a type: what its value must be, and whether it must be present.
public struct AuthorizationDetailField: Sendable, Equatable {
    public var kind: Kind
    public var required: Bool

    public enum Kind: Sendable, Equatable {
        /// A string of at most `maxLength` characters (Unicode scalars), without control or
        /// format characters: what a device shows must look like what it says.
        case string(maxLength: Int?)
        /// A decimal amount as a string, "123.50": digits, at most one point, no sign, no
        /// exponent. A string, as in RFC 9396's examples, so no rounding ever touches it.
        case amount
        /// An ISO 4217 alphabetic code: three upper-case ASCII letters.
        case currency
        /// A JSON integer. Fractions are refused (the signed canonical form has integers only);
        /// use `amount` for decimals.
        case number
        case boolean
        /// An array of strings, each as `string` with the same `maxLength`.
        case stringArray(maxLength: Int?)
        case object(AuthorizationDetailFields)

        /// The name in the schema JSON.
        var name: String {
            switch self {
            case .string: "string"
            case .amount: "amount"
            case .currency: "currency"
            case .number: "number"
            case .boolean: "boolean"
            case .stringArray: "string_array"
            case .object: "object"
            }
        }
    }
}

/// A tenant's registry of authorization detail types, stored with the tenant as JSON:
///
/// ```json
/// {"types": {"payment_initiation": {"fields": {
///     "instructedAmount": {"kind": "object", "required": true, "fields": {
///         "amount": {"kind": "amount", "required": true},
///         "currency": {"kind": "currency", "required": true}}},
///     "creditorName": {"kind": "string", "max_length": 140, "required": true}}}}}
/// ```
public struct AuthorizationDetailTypes: Sendable, Equatable {
    public static let none = AuthorizationDetailTypes(types: [:])

    /// The most types one tenant registers.
    static let maximumTypes = 50
    /// The most fields one object declares.
    static let maximumFields = 50
    /// How deep `object` fields nest below the top level.
    static let maximumDepth = 4
    static let maximumNameLength = 100
    /// The longest `max_length` a field may declare; the request as a whole is capped anyway.
    static let maximumStringLength = 4096
    /// RFC 9396 §2.2: the common fields and the only kind each may have. A type lists those it uses.
    static let commonFields: [String: String] = [
        "locations": "string_array", "actions": "string_array", "datatypes": "string_array",
        "privileges": "string_array", "identifier": "string",
    ]

    public var types: [String: AuthorizationDetailType]

    /// The type names, sorted: what discovery lists.
    public var names: [String] { types.keys.sorted() }

    public func type(named name: String) -> AuthorizationDetailType? { types[name] }
}
