import Foundation

/// Applies PATCH operations to a resource's JSON by RFC 7644 §3.5.2's rules and the resource's
/// schema; the caller then reads the result back into its model, which checks the types.
///
/// What Countersign does not keep is passed over rather than refused: an extension's attributes
/// (Entra ID maps `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber`)
/// and core attributes it does not store (`title`, `phoneNumbers[type eq "work"].value`), since
/// refusing them would stop a provider's whole provisioning cycle for data nobody here reads.
struct PatchApplication {
    let schema: SCIMResourceSchema
    /// Members by their schema's spelling of the name.
    var resource: [String: SCIMJSON]

    mutating func apply(_ operation: SCIMPatchOperation) throws(SCIMError) {
        if let path = operation.path {
            try apply(operation.op, at: path, value: operation.value)
            return
        }
        // Without a path, each member of the value is an attribute, or a path such as
        // `name.givenName` (RFC 7644 §3.5.2.1, §3.5.2.3).
        for (key, value) in (operation.value?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard key.caseInsensitiveCompare("schemas") != .orderedSame else { continue }
            try apply(operation.op, at: SCIMPatchPath(parsing: key), value: value)
        }
    }

    private mutating func apply(_ op: SCIMPatchOperation.Op, at path: SCIMPatchPath, value: SCIMJSON?) throws(SCIMError) {
        guard schema.owns(path.attribute.schema), let definition = schema.attribute(path.attribute.name) else { return }
        let name = definition.name
        if definition.mutability == .readOnly {
            // Okta repeats the group's id in a rename: an unchanged read-only value is no change.
            if op != .remove, path.filter == nil, path.subAttribute == nil, value == resource[name] { return }
            throw .mutability("\(name) is read-only.")
        }
        if path.subAttribute != nil || path.filter != nil, definition.type != .complex {
            throw .invalidPath("\(name) has no sub-attributes, so \"\(path)\" names nothing.")
        }
        if let filter = path.filter {
            guard definition.multiValued else { throw .invalidPath("\(name) has one value, which a filter cannot select.") }
            try apply(op, toValuesOf: definition, matching: filter, subAttribute: path.subAttribute, value: value)
        } else if let sub = path.subAttribute {
            guard let subDefinition = definition.subAttribute(sub) else { return }
            try apply(op, to: definition, subAttribute: subDefinition, value: value)
        } else if op == .remove {
            if definition.multiValued, let value {
                // Entra ID removes members by listing them as the value of a remove.
                removeValues(of: definition, listedIn: value)
            } else {
                resource[name] = nil
            }
        } else if let value {
            let coerced = coerce(value, definition)
            if definition.multiValued {
                let values = coerced.arrayValue ?? [coerced]
                if op == .replace { resource[name] = nil }
                append(values, to: definition)
            } else if definition.type == .complex {
                guard case .object(let members) = coerced else { throw .invalidValue("\(name) must be an object, not \(value.typeName).") }
                var merged = resource[name]?.objectValue ?? [:]
                merged.merge(members) { _, new in new }
                resource[name] = .object(merged.filter { $0.value != .null })
            } else {
                resource[name] = coerced
            }
        }
    }

    /// `name.givenName`, or `emails.value` (every e-mail's value, as no filter narrows it).
    private mutating func apply(_ op: SCIMPatchOperation.Op, to definition: SCIMAttributeDefinition,
                                subAttribute sub: SCIMAttributeDefinition, value: SCIMJSON?) throws(SCIMError) {
        let newValue = op == .remove ? nil : value.map { coerce($0, sub) }
        if definition.multiValued {
            var elements = resource[definition.name]?.arrayValue ?? []
            if elements.isEmpty, let newValue { elements = [.object([sub.name: newValue])] }
            resource[definition.name] = .array(elements.map { $0.setting(sub.name, to: newValue) })
        } else {
            let object = (resource[definition.name] ?? .object([:])).setting(sub.name, to: newValue)
            resource[definition.name] = object == .object([:]) ? nil : object
        }
    }

    private mutating func apply(_ op: SCIMPatchOperation.Op, toValuesOf definition: SCIMAttributeDefinition, matching filter: SCIMFilter,
                                subAttribute: String?, value: SCIMJSON?) throws(SCIMError) {
        var elements = resource[definition.name]?.arrayValue ?? []
        let matched = elements.indices.filter { filter.matches(value: elements[$0], of: definition) }
        let sub = subAttribute.flatMap(definition.subAttribute)
        if subAttribute != nil, sub == nil { return }
        switch (op, value) {
        case (.remove, _):
            if let sub {
                for index in matched { elements[index] = elements[index].setting(sub.name, to: nil) }
            } else {
                for index in matched.reversed() { elements.remove(at: index) }
            }
            resource[definition.name] = elements.isEmpty ? nil : .array(elements)
        case (_, let value?) where !matched.isEmpty:
            let coerced = coerce(value, sub ?? definition)
            for index in matched {
                if let sub {
                    elements[index] = elements[index].setting(sub.name, to: coerced)
                } else {
                    guard case .object(let members) = coerced else {
                        throw .invalidValue("A value of \(definition.name) must be an object, not \(value.typeName).")
                    }
                    elements[index] = op == .replace ? coerced : .object((elements[index].objectValue ?? [:]).merging(members) { _, new in new })
                }
            }
            resource[definition.name] = .array(elements)
            if sub?.name == "primary", coerced == .bool(true), let first = matched.first { demotePrimaries(of: definition, except: first) }
        case (_, let value?):
            // Nothing matches: Entra ID adds `emails[type eq "work"].value` to a user without a
            // work address and expects one to be made, so a filter of equalities makes the value it
            // describes; any other filter has nothing to change (RFC 7644 §3.5.2.3, noTarget).
            guard var element = Self.equalities(filter, definition) else {
                throw .noTarget("No value of \(definition.name) matches [\(filter)].")
            }
            if let sub {
                element[sub.name] = coerce(value, sub)
            } else {
                guard case .object(let members) = coerce(value, definition) else {
                    throw .invalidValue("A value of \(definition.name) must be an object, not \(value.typeName).")
                }
                element.merge(members) { _, new in new }
            }
            append([.object(element)], to: definition)
        case (_, nil):
            break
        }
    }

    /// The sub-attributes a filter of `eq` comparisons joined by `and` fixes, by their schema names.
    private static func equalities(_ filter: SCIMFilter, _ definition: SCIMAttributeDefinition) -> [String: SCIMJSON]? {
        switch filter {
        case .compare(let path, .eq, let value) where path.subAttribute == nil && value != .null:
            guard let sub = definition.subAttribute(path.name) else { return nil }
            return [sub.name: value]
        case .and(let left, let right):
            guard let left = equalities(left, definition), let right = equalities(right, definition) else { return nil }
            return left.merging(right) { _, new in new }
        default:
            return nil
        }
    }

    /// Adds values to a multi-valued attribute, leaving out those it holds already; a value added
    /// as primary makes the others not primary (RFC 7644 §3.5.2.1).
    private mutating func append(_ values: [SCIMJSON], to definition: SCIMAttributeDefinition) {
        var elements = resource[definition.name]?.arrayValue ?? []
        for value in values where !elements.contains(where: { Self.same($0, value, definition) }) {
            elements.append(value)
            if value[caseInsensitive: "primary"] == .bool(true) {
                resource[definition.name] = .array(elements)
                demotePrimaries(of: definition, except: elements.count - 1)
                elements = resource[definition.name]?.arrayValue ?? []
            }
        }
        resource[definition.name] = elements.isEmpty ? nil : .array(elements)
    }

    private mutating func demotePrimaries(of definition: SCIMAttributeDefinition, except kept: Int) {
        guard var elements = resource[definition.name]?.arrayValue else { return }
        for index in elements.indices where index != kept && elements[index][caseInsensitive: "primary"] == .bool(true) {
            elements[index] = elements[index].setting("primary", to: .bool(false))
        }
        resource[definition.name] = .array(elements)
    }

    private mutating func removeValues(of definition: SCIMAttributeDefinition, listedIn value: SCIMJSON) {
        let listed = value.arrayValue ?? [value]
        let kept = (resource[definition.name]?.arrayValue ?? []).filter { element in
            !listed.contains { Self.same(element, $0, definition) }
        }
        resource[definition.name] = kept.isEmpty ? nil : .array(kept)
    }

    /// Two values of a multi-valued attribute are the same if they are equal, or if both have a
    /// `value` and those compare equal (with case only where the schema says so).
    private static func same(_ a: SCIMJSON, _ b: SCIMJSON, _ definition: SCIMAttributeDefinition) -> Bool {
        if a == b { return true }
        guard case .string(let left)? = a[caseInsensitive: "value"], case .string(let right)? = b[caseInsensitive: "value"] else {
            return false
        }
        let caseExact = definition.subAttribute("value")?.caseExact ?? false
        return caseExact ? left == right : left.caseInsensitiveCompare(right) == .orderedSame
    }

    /// The value with sub-attribute names spelled as the schema spells them, those the schema
    /// lacks dropped, and booleans sent as "True" or "False" read as booleans: Entra ID sends
    /// `active` that way (its documented deviation), and would otherwise never deactivate anyone.
    private func coerce(_ value: SCIMJSON, _ definition: SCIMAttributeDefinition) -> SCIMJSON {
        switch value {
        case .string(let text) where definition.type == .boolean:
            switch text.lowercased() {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: return value
            }
        case .array(let elements) where definition.multiValued:
            return .array(elements.map { coerceElement($0, definition) })
        default:
            return coerceElement(value, definition)
        }
    }

    private func coerceElement(_ value: SCIMJSON, _ definition: SCIMAttributeDefinition) -> SCIMJSON {
        guard definition.type == .complex, case .object(let members) = value else { return value }
        var known: [String: SCIMJSON] = [:]
        for (key, member) in members {
            if let sub = definition.subAttribute(key) { known[sub.name] = coerce(member, sub) }
        }
        return .object(known)
    }
}

extension SCIMJSON {
    /// This object with `name` set to `value`, or removed for nil.
    func setting(_ name: String, to value: SCIMJSON?) -> SCIMJSON {
        var members = objectValue ?? [:]
        if let key = members.keys.first(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) { members[key] = nil }
        members[name] = value
        return .object(members)
    }
}
