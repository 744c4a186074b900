import Foundation

/// One attribute as a schema defines it (RFC 7643 §7): what the `/Schemas` document says, and what
/// PATCH, filters and decoding consult for type, case and mutability.
public struct SCIMAttributeDefinition: Sendable {
    public enum DataType: String, Sendable { case string, boolean, decimal, integer, dateTime, reference, complex, binary }
    public enum Mutability: String, Sendable { case readOnly, readWrite, immutable, writeOnly }
    public enum Returned: String, Sendable { case always, never, `default`, request }
    public enum Uniqueness: String, Sendable { case none, server, global }

    public var name: String
    public var type: DataType
    public var multiValued = false
    public var description: String
    public var required = false
    /// Whether string values compare with case; RFC 7643 §2.2's default is no.
    public var caseExact = false
    public var mutability = Mutability.readWrite
    public var returned = Returned.default
    public var uniqueness = Uniqueness.none
    public var canonicalValues: [String] = []
    public var referenceTypes: [String] = []
    public var subAttributes: [SCIMAttributeDefinition] = []

    /// The sub-attribute named `name`, in any case.
    public func subAttribute(_ name: String) -> SCIMAttributeDefinition? {
        subAttributes.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// The definition as RFC 7643 §7 writes it.
    public var json: SCIMJSON {
        var members: [String: SCIMJSON] = [
            "name": .string(name), "type": .string(type.rawValue), "multiValued": .bool(multiValued),
            "description": .string(description), "required": .bool(required), "mutability": .string(mutability.rawValue),
            "returned": .string(returned.rawValue),
        ]
        if type == .string || type == .reference || type == .binary {
            members["caseExact"] = .bool(caseExact)
            members["uniqueness"] = .string(uniqueness.rawValue)
        }
        if !canonicalValues.isEmpty { members["canonicalValues"] = .array(canonicalValues.map(SCIMJSON.string)) }
        if !referenceTypes.isEmpty { members["referenceTypes"] = .array(referenceTypes.map(SCIMJSON.string)) }
        if type == .complex { members["subAttributes"] = .array(subAttributes.map(\.json)) }
        return .object(members)
    }
}
