import CountersignCore

/// PostgreSQL cannot store U+0000 in text, and no field of Countersign's has a use for it: input
/// that carries one is refused where it is parsed, with that field's own error, so that both
/// engines answer alike and no query fails on it.
extension JSONValue {
    /// The path (`push.token`, `[0].name`) to the first string, or member name, holding a NUL;
    /// nil when there is none.
    var pathToNULCharacter: String? {
        switch self {
        case .string(let text):
            return text.unicodeScalars.contains("\0") ? "" : nil
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let path = element.pathToNULCharacter { return JSONPath.element(index, then: path) }
            }
            return nil
        case .object(let members):
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                if name.unicodeScalars.contains("\0") { return name.debugDescription }
                if let path = member.pathToNULCharacter { return JSONPath.member(name, then: path) }
            }
            return nil
        default:
            return nil
        }
    }

    var holdsNULCharacter: Bool { pathToNULCharacter != nil }
}
