/// Reads a resource body's members as SCIM says to (RFC 7643 §2.1, §2.5; RFC 7644 §3.3): names in
/// any case, `null` as unassigned, and a type error refused with `invalidValue` naming the
/// attribute. Members it is not asked for are ignored, which is how unknown and read-only
/// attributes are dropped.
struct ResourceReader {
    private let members: [String: SCIMJSON]
    /// Where these members sit, for error details (`emails[1]`).
    private let path: String

    init(_ json: SCIMJSON, at path: String = "") throws(SCIMError) {
        guard case .object(let members) = json else {
            throw path.isEmpty ? .invalidSyntax("The body must be a JSON object.") : .invalidValue("\(path) must be an object.")
        }
        var lowered: [String: SCIMJSON] = [:]
        // In order, so that the same body is always refused with the same detail.
        for (name, value) in members.sorted(by: { $0.key < $1.key }) {
            guard lowered.updateValue(value, forKey: name.lowercased()) == nil else {
                throw .invalidValue("The attribute \(Self.join(path, name)) appears twice, in different case.")
            }
        }
        self.members = lowered
        self.path = path
    }

    private static func join(_ path: String, _ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    private func value(_ name: String) -> SCIMJSON? {
        switch members[name.lowercased()] {
        case nil, .null?: nil
        case let value?: value
        }
    }

    func string(_ name: String) throws(SCIMError) -> String? {
        guard let value = value(name) else { return nil }
        guard case .string(let text) = value else {
            throw .invalidValue("\(Self.join(path, name)) must be a string, not \(value.typeName).")
        }
        return text
    }

    func requiredString(_ name: String) throws(SCIMError) -> String {
        guard let text = try string(name), !text.isEmpty else { throw .invalidValue("\(Self.join(path, name)) is required.") }
        return text
    }

    func bool(_ name: String) throws(SCIMError) -> Bool? {
        guard let value = value(name) else { return nil }
        guard case .bool(let flag) = value else {
            throw .invalidValue("\(Self.join(path, name)) must be a boolean, not \(value.typeName).")
        }
        return flag
    }

    /// An integer that fits in `Int`; a larger one is clamped, since it can only mean "past the end".
    func integer(_ name: String) throws(SCIMError) -> Int? {
        guard let value = value(name) else { return nil }
        guard case .integer(let number) = value else {
            throw .invalidValue("\(Self.join(path, name)) must be an integer, not \(value.typeName).")
        }
        return Int(clamping: number)
    }

    func strings(_ name: String) throws(SCIMError) -> [String]? {
        guard let value = value(name) else { return nil }
        guard case .array(let elements) = value else {
            throw .invalidValue("\(Self.join(path, name)) must be an array of strings, not \(value.typeName).")
        }
        var strings: [String] = []
        for element in elements {
            guard case .string(let text) = element else {
                throw .invalidValue("\(Self.join(path, name)) must be an array of strings.")
            }
            strings.append(text)
        }
        return strings
    }

    func object(_ name: String) throws(SCIMError) -> ResourceReader? {
        guard let value = value(name) else { return nil }
        return try ResourceReader(value, at: Self.join(path, name))
    }

    /// A multi-valued attribute's values; a single value where an array belongs is refused.
    func objects(_ name: String) throws(SCIMError) -> [ResourceReader] {
        guard let value = value(name) else { return [] }
        guard case .array(let elements) = value else {
            throw .invalidValue("\(Self.join(path, name)) must be an array, not \(value.typeName).")
        }
        var readers: [ResourceReader] = []
        for (index, element) in elements.enumerated() {
            readers.append(try ResourceReader(element, at: "\(Self.join(path, name))[\(index)]"))
        }
        return readers
    }
}
