import Foundation

/// A JSON value as JSON Schema sees it: integers and other numbers apart only where the text
/// has a fraction or an exponent, booleans never numbers.
indirect enum SchemaValue: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([SchemaValue])
    case object([String: SchemaValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .integer(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([SchemaValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: SchemaValue].self)) }
    }

    static func parse(_ data: Data) throws -> SchemaValue { try JSONDecoder().decode(SchemaValue.self, from: data) }

    subscript(key: String) -> SchemaValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var string: String? { if case .string(let value) = self { value } else { nil } }
    var object: [String: SchemaValue]? { if case .object(let value) = self { value } else { nil } }
    var array: [SchemaValue]? { if case .array(let value) = self { value } else { nil } }
    var number: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }

    /// JSON Schema's equality: 1 and 1.0 are the same number.
    func same(as other: SchemaValue) -> Bool {
        switch (self, other) {
        case (.integer, .number), (.number, .integer): number == other.number
        case (.array(let left), .array(let right)):
            left.count == right.count && zip(left, right).allSatisfy { $0.same(as: $1) }
        case (.object(let left), .object(let right)):
            left.count == right.count && left.allSatisfy { key, value in right[key].map { value.same(as: $0) } ?? false }
        default: self == other
        }
    }

    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .number(let value): value.rounded() == value ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// A JSON Schema 2020-12 validator for the keywords the OpenAPI document uses, resolving local
/// `$ref`s against the whole document. A keyword it does not know is itself a failure, so a
/// schema is never passed by a check that was silently skipped.
struct JSONSchemaValidator: Sendable {
    let root: SchemaValue

    /// Keywords that describe and do not constrain.
    static let annotations: Set<String> = [
        "description", "title", "summary", "examples", "example", "default", "deprecated", "readOnly", "writeOnly",
        "$comment", "contentMediaType", "contentEncoding", "externalDocs", "discriminator", "xml", "$schema", "$id",
    ]

    /// The failures of `instance` against `schema`, each `path: why`; empty when it is valid.
    func failures(of instance: SchemaValue, against schema: SchemaValue, at path: String = "$") -> [String] {
        var evaluated = Set<String>()
        return check(instance, schema, path, &evaluated)
    }

    private func resolve(_ reference: String) -> SchemaValue? {
        guard reference.hasPrefix("#/") else { return nil }
        var node = root
        for part in reference.dropFirst(2).split(separator: "/") {
            let key = part.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            guard let next = node[key] else { return nil }
            node = next
        }
        return node
    }

    /// Checks one schema; `evaluated` collects the object members this schema (and its
    /// successful subschemas) evaluated, for `unevaluatedProperties`.
    private func check(_ instance: SchemaValue, _ schema: SchemaValue, _ path: String, _ evaluated: inout Set<String>) -> [String] {
        if case .bool(let accepts) = schema { return accepts ? [] : ["\(path): no value is allowed here"] }
        guard let keywords = schema.object else { return ["\(path): the schema is not an object"] }
        var failures: [String] = []
        for (keyword, value) in keywords.sorted(by: { $0.key < $1.key }) where keyword != "unevaluatedProperties" {
            if Self.annotations.contains(keyword) || keyword.hasPrefix("x-") { continue }
            failures += apply(keyword, value, keywords, instance, path, &evaluated)
        }
        if let unevaluated = keywords["unevaluatedProperties"], case .object(let members) = instance {
            for (name, value) in members.sorted(by: { $0.key < $1.key }) where !evaluated.contains(name) {
                var ignored = Set<String>()
                failures += check(value, unevaluated, "\(path).\(name)", &ignored)
            }
            evaluated.formUnion(members.keys)
        }
        return failures
    }

    private func apply(_ keyword: String, _ value: SchemaValue, _ keywords: [String: SchemaValue], _ instance: SchemaValue,
                       _ path: String, _ evaluated: inout Set<String>) -> [String] {
        switch keyword {
        case "$ref":
            guard let reference = value.string, let target = resolve(reference) else {
                return ["\(path): unresolvable $ref \(value)"]
            }
            return check(instance, target, path, &evaluated)
        case "type":
            let allowed = value.array?.compactMap(\.string) ?? value.string.map { [$0] } ?? []
            let actual = instance.typeName
            let fits = allowed.contains(actual) || (actual == "integer" && allowed.contains("number"))
            return fits ? [] : ["\(path): is \(actual), expected \(allowed.joined(separator: " or "))"]
        case "enum":
            let options = value.array ?? []
            return options.contains { $0.same(as: instance) } ? [] : ["\(path): \(describe(instance)) is not one of \(options.map(describe))"]
        case "const":
            return value.same(as: instance) ? [] : ["\(path): \(describe(instance)) is not \(describe(value))"]
        case "properties":
            guard case .object(let members) = instance, let properties = value.object else { return [] }
            var failures: [String] = []
            for (name, schema) in properties.sorted(by: { $0.key < $1.key }) {
                guard let member = members[name] else { continue }
                var ignored = Set<String>()
                failures += check(member, schema, "\(path).\(name)", &ignored)
                evaluated.insert(name)
            }
            return failures
        case "patternProperties":
            guard case .object(let members) = instance, let patterns = value.object else { return [] }
            var failures: [String] = []
            for (pattern, schema) in patterns {
                for (name, member) in members where matches(name, pattern) {
                    var ignored = Set<String>()
                    failures += check(member, schema, "\(path).\(name)", &ignored)
                    evaluated.insert(name)
                }
            }
            return failures
        case "additionalProperties":
            guard case .object(let members) = instance else { return [] }
            let named = Set(keywords["properties"]?.object?.keys.map { $0 } ?? [])
            let patterns = keywords["patternProperties"]?.object?.keys.map { $0 } ?? []
            var failures: [String] = []
            for (name, member) in members.sorted(by: { $0.key < $1.key })
            where !named.contains(name) && !patterns.contains(where: { matches(name, $0) }) {
                if case .bool(false) = value {
                    failures.append("\(path): member \(name) is not in the schema")
                } else {
                    var ignored = Set<String>()
                    failures += check(member, value, "\(path).\(name)", &ignored)
                }
                evaluated.insert(name)
            }
            return failures
        case "propertyNames":
            guard case .object(let members) = instance else { return [] }
            return members.keys.sorted().flatMap { name -> [String] in
                var ignored = Set<String>()
                return check(.string(name), value, "\(path).\(name) (name)", &ignored)
            }
        case "required":
            guard case .object(let members) = instance else { return [] }
            return (value.array ?? []).compactMap(\.string).filter { members[$0] == nil }.map { "\(path): member \($0) is missing" }
        case "minProperties", "maxProperties":
            guard case .object(let members) = instance, let bound = value.number else { return [] }
            let fits = keyword == "minProperties" ? Double(members.count) >= bound : Double(members.count) <= bound
            return fits ? [] : ["\(path): \(members.count) members breaks \(keyword) \(Int(bound))"]
        case "items":
            guard case .array(let elements) = instance else { return [] }
            let skip = keywords["prefixItems"]?.array?.count ?? 0
            return elements.enumerated().dropFirst(skip).flatMap { index, element -> [String] in
                var ignored = Set<String>()
                return check(element, value, "\(path)[\(index)]", &ignored)
            }
        case "prefixItems":
            guard case .array(let elements) = instance, let schemas = value.array else { return [] }
            return zip(elements, schemas).enumerated().flatMap { index, pair -> [String] in
                var ignored = Set<String>()
                return check(pair.0, pair.1, "\(path)[\(index)]", &ignored)
            }
        case "minItems", "maxItems":
            guard case .array(let elements) = instance, let bound = value.number else { return [] }
            let fits = keyword == "minItems" ? Double(elements.count) >= bound : Double(elements.count) <= bound
            return fits ? [] : ["\(path): \(elements.count) elements breaks \(keyword) \(Int(bound))"]
        case "uniqueItems":
            guard case .array(let elements) = instance, case .bool(true) = value else { return [] }
            for (index, element) in elements.enumerated() where elements[..<index].contains(where: { $0.same(as: element) }) {
                return ["\(path): element \(index) repeats an earlier one"]
            }
            return []
        case "minLength", "maxLength":
            guard case .string(let text) = instance, let bound = value.number else { return [] }
            let length = Double(text.unicodeScalars.count)
            let fits = keyword == "minLength" ? length >= bound : length <= bound
            return fits ? [] : ["\(path): length \(Int(length)) breaks \(keyword) \(Int(bound))"]
        case "pattern":
            guard case .string(let text) = instance, let pattern = value.string else { return [] }
            return matches(text, pattern) ? [] : ["\(path): \(describe(instance)) does not match \(pattern)"]
        case "format":
            guard case .string(let text) = instance, let format = value.string else { return [] }
            return Self.fits(text, format: format) ? [] : ["\(path): \(describe(instance)) is not a \(format)"]
        case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
            guard let number = instance.number, let bound = value.number else { return [] }
            let fits = switch keyword {
            case "minimum": number >= bound
            case "maximum": number <= bound
            case "exclusiveMinimum": number > bound
            default: number < bound
            }
            return fits ? [] : ["\(path): \(describe(instance)) breaks \(keyword) \(describe(value))"]
        case "multipleOf":
            guard let number = instance.number, let divisor = value.number, divisor > 0 else { return [] }
            return number.truncatingRemainder(dividingBy: divisor) == 0 ? [] : ["\(path): not a multiple of \(divisor)"]
        case "allOf":
            return (value.array ?? []).enumerated().flatMap { index, schema in
                check(instance, schema, path, &evaluated).map { "\($0) (allOf[\(index)])" }
            }
        case "anyOf", "oneOf":
            var passed = 0
            var reasons: [String] = []
            for schema in value.array ?? [] {
                var branch = Set<String>()
                let failures = check(instance, schema, path, &branch)
                if failures.isEmpty {
                    passed += 1
                    evaluated.formUnion(branch)
                } else {
                    reasons.append(failures.joined(separator: "; "))
                }
            }
            if keyword == "oneOf", passed > 1 { return ["\(path): matches \(passed) schemas of oneOf, not one"] }
            return passed > 0 ? [] : ["\(path): matches none of \(keyword): [\(reasons.joined(separator: " | "))]"]
        case "not":
            var ignored = Set<String>()
            return check(instance, value, path, &ignored).isEmpty ? ["\(path): matches a schema it must not"] : []
        case "if":
            var branch = Set<String>()
            let holds = check(instance, value, path, &branch).isEmpty
            if holds { evaluated.formUnion(branch) }
            guard let next = keywords[holds ? "then" : "else"] else { return [] }
            return check(instance, next, path, &evaluated)
        case "then", "else":
            return []
        case "dependentRequired":
            guard case .object(let members) = instance, let rules = value.object else { return [] }
            return rules.sorted(by: { $0.key < $1.key }).flatMap { name, needed -> [String] in
                guard members[name] != nil else { return [] }
                return (needed.array ?? []).compactMap(\.string).filter { members[$0] == nil }
                    .map { "\(path): member \($0) is required with \(name)" }
            }
        default:
            return ["\(path): the validator does not know the keyword \(keyword)"]
        }
    }

    private func matches(_ text: String, _ pattern: String) -> Bool {
        text.range(of: pattern, options: .regularExpression) != nil
    }

    private func describe(_ value: SchemaValue) -> String {
        switch value {
        case .string(let text): "\"\(text.prefix(80))\""
        case .integer(let number): "\(number)"
        case .number(let number): "\(number)"
        case .bool(let flag): "\(flag)"
        case .null: "null"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The formats the document names, checked as their RFCs write them.
    static func fits(_ text: String, format: String) -> Bool {
        switch format {
        case "date-time":
            // RFC 3339 §5.6: full-date "T" full-time, with an offset or Z.
            return text.range(of: #"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"#,
                              options: .regularExpression) != nil
        case "date":
            return text.range(of: #"^\d{4}-\d{2}-\d{2}$"#, options: .regularExpression) != nil
        case "uuid":
            return UUID(uuidString: text) != nil
        case "uri":
            guard let components = URLComponents(string: text) else { return false }
            return components.scheme != nil
        case "uri-reference":
            return URLComponents(string: text) != nil
        case "email":
            return text.contains("@")
        case "byte":
            return Data(base64Encoded: text) != nil
        case "int32", "int64", "double", "float", "password", "binary", "base64url", "jws", "jwt":
            return true
        default:
            return false
        }
    }
}
