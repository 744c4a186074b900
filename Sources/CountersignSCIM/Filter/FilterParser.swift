/// RFC 7644 §3.4.2.2's filter grammar, read by recursive descent over tokens.
///
/// `or` binds less tightly than `and`, which binds less tightly than `not` and parentheses
/// (the RFC's precedence). Keywords and operators are case-insensitive, as ABNF literals are.
/// Recursion is bounded by `SCIMFilter.maximumDepth`, the work by `maximumLength` and
/// `maximumComparisons`: filters arrive in query strings from anyone holding a token.
struct FilterParser {
    enum Token: Equatable {
        case open, close, openBracket, closeBracket
        /// An attribute path, keyword or operator: letters, digits and `:._$-`.
        case word(Substring)
        case value(SCIMJSON)
    }

    private let tokens: [(token: Token, offset: Int)]
    private let end: Int
    private var position = 0
    private var comparisons = 0

    private init(_ text: String) throws(SCIMError) {
        guard text.utf8.count <= SCIMFilter.maximumLength else {
            throw .invalidFilter(offset: SCIMFilter.maximumLength, reason: "a filter may be at most \(SCIMFilter.maximumLength) bytes long")
        }
        tokens = try Self.tokens(text)
        end = text.utf8.count
    }

    static func filter(_ text: String) throws(SCIMError) -> SCIMFilter {
        var parser = try FilterParser(text)
        guard !parser.tokens.isEmpty else { throw .invalidFilter(offset: 0, reason: "the filter is empty") }
        let filter = try parser.orExpression(depth: 0, insideBrackets: false)
        guard parser.position == parser.tokens.count else { throw parser.failure("the filter should end here") }
        return filter
    }

    /// A PATCH path (RFC 7644 §3.5.2): `attrPath`, or `valuePath` with an optional `.subAttr`.
    static func patchPath(_ text: String) throws(SCIMError) -> SCIMPatchPath {
        do throws(SCIMError) {
            var parser = try FilterParser(text)
            guard case .word(let word)? = parser.peek else { throw parser.failure("an attribute path was expected") }
            let attribute = try parser.attributePath(word)
            parser.position += 1
            var filter: SCIMFilter?
            var subAttribute = attribute.subAttribute
            if parser.peek == .openBracket {
                guard attribute.subAttribute == nil else { throw parser.failure("a value filter follows an attribute, not a sub-attribute") }
                parser.position += 1
                filter = try parser.orExpression(depth: 1, insideBrackets: true)
                try parser.expect(.closeBracket, "']' was expected")
                if case .word(let word)? = parser.peek, word.first == ".", SCIMAttributePath.isAttributeName(word.dropFirst()) {
                    subAttribute = String(word.dropFirst())
                    parser.position += 1
                }
            }
            guard parser.position == parser.tokens.count else { throw parser.failure("the path should end here") }
            return SCIMPatchPath(
                attribute: SCIMAttributePath(schema: attribute.schema, name: attribute.name), filter: filter, subAttribute: subAttribute)
        } catch {
            if case .invalidFilter(let offset, let reason) = error {
                throw .invalidPath("The path \"\(text)\" is not valid at byte \(offset): \(reason).")
            }
            throw error
        }
    }

    private var peek: Token? { position < tokens.count ? tokens[position].token : nil }

    private func failure(_ reason: String) -> SCIMError {
        .invalidFilter(offset: position < tokens.count ? tokens[position].offset : end, reason: reason)
    }

    private mutating func expect(_ token: Token, _ reason: String) throws(SCIMError) {
        guard peek == token else { throw failure(reason) }
        position += 1
    }

    private func isKeyword(_ keyword: String) -> Bool {
        guard case .word(let word)? = peek else { return false }
        return word.lowercased() == keyword
    }

    private mutating func orExpression(depth: Int, insideBrackets: Bool) throws(SCIMError) -> SCIMFilter {
        var filter = try andExpression(depth: depth, insideBrackets: insideBrackets)
        while isKeyword("or") {
            position += 1
            filter = .or(filter, try andExpression(depth: depth, insideBrackets: insideBrackets))
        }
        return filter
    }

    private mutating func andExpression(depth: Int, insideBrackets: Bool) throws(SCIMError) -> SCIMFilter {
        var filter = try unary(depth: depth, insideBrackets: insideBrackets)
        while isKeyword("and") {
            position += 1
            filter = .and(filter, try unary(depth: depth, insideBrackets: insideBrackets))
        }
        return filter
    }

    private mutating func unary(depth: Int, insideBrackets: Bool) throws(SCIMError) -> SCIMFilter {
        guard depth <= SCIMFilter.maximumDepth else {
            throw failure("filters may nest at most \(SCIMFilter.maximumDepth) deep")
        }
        // `not` is a keyword only before a parenthesis; otherwise it could be an attribute's name.
        if isKeyword("not"), position + 1 < tokens.count, tokens[position + 1].token == .open {
            position += 2
            let inner = try orExpression(depth: depth + 1, insideBrackets: insideBrackets)
            try expect(.close, "')' was expected")
            return .not(inner)
        }
        if peek == .open {
            position += 1
            let inner = try orExpression(depth: depth + 1, insideBrackets: insideBrackets)
            try expect(.close, "')' was expected")
            return inner
        }
        guard case .word(let word)? = peek else { throw failure("an attribute path, 'not' or '(' was expected") }
        let start = tokens[position].offset
        let path = try attributePath(word)
        position += 1
        if peek == .openBracket {
            guard !insideBrackets else { throw failure("a value filter cannot hold another") }
            guard path.subAttribute == nil else { throw failure("a value filter follows an attribute, not a sub-attribute") }
            position += 1
            let inner = try orExpression(depth: depth + 1, insideBrackets: true)
            try expect(.closeBracket, "']' was expected")
            return .valuePath(path, inner)
        }
        comparisons += 1
        guard comparisons <= SCIMFilter.maximumComparisons else {
            throw .invalidFilter(offset: start, reason: "a filter may hold at most \(SCIMFilter.maximumComparisons) comparisons")
        }
        guard case .word(let operatorWord)? = peek else {
            throw failure("an operator (eq, ne, co, sw, ew, gt, ge, lt, le or pr) was expected after \(path)")
        }
        let lowered = operatorWord.lowercased()
        if lowered == "pr" {
            position += 1
            return .present(path)
        }
        guard let op = SCIMCompareOperator(rawValue: lowered) else {
            throw failure("\"\(operatorWord)\" is not an operator (eq, ne, co, sw, ew, gt, ge, lt, le or pr)")
        }
        position += 1
        let value: SCIMJSON
        switch peek {
        case .value(let literal)?: value = literal
        case .word(let word)? where ["true", "false", "null"].contains(word.lowercased()):
            value = switch word.lowercased() {
            case "true": .bool(true)
            case "false": .bool(false)
            default: .null
            }
        default:
            throw failure("a value (a quoted string, a number, true, false or null) was expected after \(op.rawValue)")
        }
        position += 1
        return .compare(path, op, value)
    }

    private func attributePath(_ word: Substring) throws(SCIMError) -> SCIMAttributePath {
        guard let path = SCIMAttributePath(word) else { throw failure("\"\(word)\" is not an attribute path") }
        return path
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    private static func tokens(_ text: String) throws(SCIMError) -> [(token: Token, offset: Int)] {
        let bytes = Array(text.utf8)
        var tokens: [(token: Token, offset: Int)] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let start = index
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                index += 1
            case UInt8(ascii: "("): tokens.append((.open, start)); index += 1
            case UInt8(ascii: ")"): tokens.append((.close, start)); index += 1
            case UInt8(ascii: "["): tokens.append((.openBracket, start)); index += 1
            case UInt8(ascii: "]"): tokens.append((.closeBracket, start)); index += 1
            case UInt8(ascii: "\""), UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                var reader = SCIMJSONReader(bytes: bytes, index: index)
                do throws(SCIMJSONReader.Failure) {
                    let value: SCIMJSON = byte == UInt8(ascii: "\"") ? .string(try reader.string()) : try reader.number()
                    tokens.append((.value(value), start))
                    index = reader.index
                } catch {
                    throw .invalidFilter(offset: error.offset, reason: error.reason)
                }
            case _ where isWordByte(byte):
                while index < bytes.count, isWordByte(bytes[index]) { index += 1 }
                let utf8 = text.utf8
                let word = text[utf8.index(utf8.startIndex, offsetBy: start)..<utf8.index(utf8.startIndex, offsetBy: index)]
                tokens.append((.word(word), start))
            default:
                throw .invalidFilter(offset: start, reason: "unexpected character")
            }
        }
        return tokens
    }
}
