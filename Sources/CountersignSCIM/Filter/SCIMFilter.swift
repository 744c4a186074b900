import Foundation

/// A SCIM filter (RFC 7644 §3.4.2.2), parsed.
///
/// ```swift
/// let filter = try SCIMFilter(parsing: #"emails[type eq "work" and value co "@example.com"]"#)
/// ```
public indirect enum SCIMFilter: Sendable, Hashable, CustomStringConvertible {
    case compare(SCIMAttributePath, SCIMCompareOperator, SCIMJSON)
    /// `pr`: the attribute has a value that is not null, not an empty string, array or object.
    case present(SCIMAttributePath)
    case and(SCIMFilter, SCIMFilter)
    case or(SCIMFilter, SCIMFilter)
    case not(SCIMFilter)
    /// `emails[type eq "work"]`: some value of a multi-valued attribute matches the inner filter,
    /// whose paths name that attribute's sub-attributes.
    case valuePath(SCIMAttributePath, SCIMFilter)

    /// The longest filter read, in bytes; longer than any identity provider sends, short enough
    /// that no filter costs much to parse or evaluate.
    public static let maximumLength = 4096
    /// How deep parentheses, `not` and brackets may nest.
    public static let maximumDepth = 16
    /// How many comparisons one filter may hold.
    public static let maximumComparisons = 64

    /// Parses `text`, or throws `SCIMError.invalidFilter` naming the byte where it went wrong.
    public init(parsing text: String) throws(SCIMError) {
        self = try FilterParser.filter(text)
    }

    /// The filter in the grammar's own syntax, which parses back to the same filter.
    public var description: String {
        switch self {
        case .compare(let path, let op, let value): "\(path) \(op.rawValue) \(value.text)"
        case .present(let path): "\(path) pr"
        case .and(let left, let right): "\(left.grouped(if: left.isOr)) and \(right.grouped(if: right.isOr || right.isAnd))"
        case .or(let left, let right): "\(left) or \(right.grouped(if: right.isOr))"
        case .not(let inner): "not (\(inner))"
        case .valuePath(let path, let inner): "\(path)[\(inner)]"
        }
    }

    /// In parentheses where precedence or left-to-right reading would group it otherwise: an
    /// `or` inside an `and`, and a right operand of its own kind (`a or (b or c)`).
    private func grouped(if needed: Bool) -> String {
        needed ? "(\(description))" : description
    }

    private var isOr: Bool {
        if case .or = self { return true }
        return false
    }

    private var isAnd: Bool {
        if case .and = self { return true }
        return false
    }
}

/// The comparison operators of RFC 7644 Table 3; `pr` is `SCIMFilter.present`.
public enum SCIMCompareOperator: String, Sendable, Hashable, CaseIterable {
    case eq, ne, co, sw, ew, gt, ge, lt, le
}
