import Foundation

/// One SQL statement with its bound values, written as an interpolated string:
///
/// ```swift
/// let statement: SQLStatement = "SELECT id FROM devices WHERE tenant_id = \(tenantID) AND status = \(Device.Status.active)"
/// ```
///
/// Every interpolated value is **bound**, never spliced into the text: the text gets the
/// placeholder `$1`, `$2`, … and the value goes to `binds`. Both engines read that text as it
/// is — PostgreSQL's numbered parameters, and SQLite's named parameters, which it numbers in
/// the order they first appear — so nothing rewrites a statement for one engine or the other.
/// Only the types the schema stores can be interpolated (`SQLStorable`, and enumerations whose
/// raw value is a string); anything else does not compile. Text that must become part of the
/// statement (a column list the code owns) is written `\(raw: …)`, and an `IN` list
/// `\(list: ids)`.
public struct SQLStatement: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The statement's text, with `$n` placeholders.
    public let text: String
    /// The bound values, `$1` first.
    public let binds: [SQLValue]

    public init(stringLiteral value: String) {
        text = value
        binds = []
    }

    @inlinable
    public init(stringInterpolation: Interpolation) {
        text = stringInterpolation.text
        binds = stringInterpolation.binds
    }

    /// A statement whose text and binds were put together by hand (`$n` placeholders, one bind
    /// each): the baseline `countersign-bench sql` measures the layer against. Not for the
    /// repositories, which interpolate.
    @_spi(Benchmarks)
    public init(text: String, binds: [SQLValue]) {
        self.text = text
        self.binds = binds
    }

    public var description: String { text }

    // Inlinable, so that statements written in other modules (the benchmarks' executable)
    // are built as cheaply as the repositories' own.
    public struct Interpolation: StringInterpolationProtocol, Sendable {
        @usableFromInline var text: String
        @usableFromInline var binds: [SQLValue]

        @inlinable
        public init(literalCapacity: Int, interpolationCount: Int) {
            text = ""
            text.reserveCapacity(literalCapacity + 4 * interpolationCount)
            binds = []
            binds.reserveCapacity(interpolationCount)
        }

        @inlinable
        public mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        /// Binds `value`.
        @inlinable
        public mutating func appendInterpolation(_ value: SQLValue) {
            binds.append(value)
            text += "$"
            text += String(binds.count)
        }

        /// Binds a value of a stored type.
        @inlinable
        public mutating func appendInterpolation<Value: SQLStorable>(_ value: Value) {
            appendInterpolation(value.sqlValue)
        }

        /// Binds an optional value of a stored type; nil binds NULL.
        @inlinable
        public mutating func appendInterpolation<Value: SQLStorable>(_ value: Value?) {
            appendInterpolation(value?.sqlValue ?? .null)
        }

        /// Binds an enumeration by its raw value.
        @inlinable
        public mutating func appendInterpolation<Value: RawRepresentable>(_ value: Value) where Value.RawValue == String {
            appendInterpolation(SQLValue.text(value.rawValue))
        }

        /// Binds an optional enumeration by its raw value, or NULL.
        @inlinable
        public mutating func appendInterpolation<Value: RawRepresentable>(_ value: Value?) where Value.RawValue == String {
            appendInterpolation(value.map { SQLValue.text($0.rawValue) } ?? .null)
        }

        /// Binds each of `values`, separated by commas, for `IN (…)`. The list must not be
        /// empty (`IN ()` is not SQL); `SQLExecutor.run(chunking:)` runs long lists in parts.
        @inlinable
        public mutating func appendInterpolation(list values: some Collection<String>) {
            precondition(!values.isEmpty, "an IN list needs at least one value")
            for (offset, value) in values.enumerated() {
                if offset > 0 { text += ", " }
                appendInterpolation(SQLValue.text(value))
            }
        }

        /// Binds rows of values for `VALUES (…), (…)`: one statement inserts them all.
        @inlinable
        public mutating func appendInterpolation(rows: some Collection<[SQLValue]>) {
            precondition(!rows.isEmpty, "VALUES needs at least one row")
            for (index, row) in rows.enumerated() {
                text += index == 0 ? "(" : ", ("
                for (offset, value) in row.enumerated() {
                    if offset > 0 { text += ", " }
                    appendInterpolation(value)
                }
                text += ")"
            }
        }

        /// Splices `part`, a condition another repository publishes on the table it owns (so that
        /// one statement can check it without naming that table outside its owner's file), its
        /// placeholders renumbered after this statement's binds.
        public mutating func appendInterpolation(_ part: SQLStatement) {
            let offset = binds.count
            var rest = Substring(part.text)
            while let dollar = rest.firstIndex(of: "$") {
                text += rest[..<dollar]
                let digits = rest[rest.index(after: dollar)...].prefix { $0.isASCII && $0.isNumber }
                // An interpolated part has a number after every `$`: the owner's text holds no other.
                precondition(!digits.isEmpty, "a `$` without a number in \(part.text)")
                text += "$" + String(Int(digits)! + offset)
                rest = rest[digits.endIndex...]
            }
            text += rest
            binds += part.binds
        }

        /// Splices `fragment` into the text. Only for text the code itself owns (a column list,
        /// a clause chosen by the dialect), never for a value.
        @inlinable
        public mutating func appendInterpolation(raw fragment: String) {
            text += fragment
        }
    }
}

/// A Swift type stored in one column, identically on both engines: text, integers, booleans
/// (0/1), bytes, and times as integer milliseconds since 1970.
public protocol SQLStorable: Sendable {
    var sqlValue: SQLValue { get }
}

extension String: SQLStorable {
    @inlinable
    public var sqlValue: SQLValue { .text(self) }
}

extension Int: SQLStorable {
    @inlinable
    public var sqlValue: SQLValue { .integer(Int64(self)) }
}

extension Int64: SQLStorable {
    @inlinable
    public var sqlValue: SQLValue { .integer(self) }
}

extension Bool: SQLStorable {
    @inlinable
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
}

extension Data: SQLStorable {
    @inlinable
    public var sqlValue: SQLValue { .blob(self) }
}

extension Date: SQLStorable {
    @inlinable
    public var sqlValue: SQLValue { .integer(Int64((timeIntervalSince1970 * 1000).rounded())) }
}

extension Optional: SQLStorable where Wrapped: SQLStorable {
    @inlinable
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

extension SQLValue {
    /// An enumeration stored by its raw value (for `\(rows:)`, whose values are built by hand).
    @inlinable
    public init<Value: RawRepresentable>(_ value: Value) where Value.RawValue == String {
        self = .text(value.rawValue)
    }
}

extension SQLValue: SQLStorable {
    @inlinable
    public var sqlValue: SQLValue { self }
}

/// A statement of the schema (`CREATE TABLE`, `ALTER TABLE`, …), written once for both
/// engines. The one type they spell differently is interpolated: `\(SQLColumnType.bytes)` is
/// `BLOB` on SQLite and `BYTEA` on PostgreSQL. Schema statements bind nothing. A statement made
/// with `postgresOnly` runs on PostgreSQL alone (names only PostgreSQL keeps, such as those of
/// constraints).
public struct SchemaStatement: Sendable, ExpressibleByStringInterpolation {
    enum Part: Sendable {
        case text(String)
        case type(SQLColumnType)
    }

    let parts: [Part]
    /// The one engine the statement runs on, or nil for both.
    var only: SQLDialect?

    /// A statement that runs on PostgreSQL and is skipped on SQLite.
    static func postgresOnly(_ text: String) -> SchemaStatement {
        var statement = SchemaStatement(stringLiteral: text)
        statement.only = .postgres
        return statement
    }

    /// Whether the statement runs on `dialect`.
    func runs(on dialect: SQLDialect) -> Bool { only.map { $0 == dialect } ?? true }

    public init(stringLiteral value: String) {
        parts = [.text(value)]
    }

    public init(stringInterpolation: Interpolation) {
        parts = stringInterpolation.parts
    }

    /// The statement as `dialect` writes it.
    public func text(for dialect: SQLDialect) -> String {
        parts.map { part in
            switch part {
            case .text(let text): text
            case .type(let type): type.name(in: dialect)
            }
        }.joined()
    }

    public struct Interpolation: StringInterpolationProtocol, Sendable {
        var parts: [Part] = []

        public init(literalCapacity: Int, interpolationCount: Int) {}

        public mutating func appendLiteral(_ literal: String) {
            parts.append(.text(literal))
        }

        public mutating func appendInterpolation(_ type: SQLColumnType) {
            parts.append(.type(type))
        }
    }
}

/// Column types whose name differs between the engines.
public enum SQLColumnType: Sendable {
    /// Bytes: `BLOB` on SQLite, `BYTEA` on PostgreSQL.
    case bytes

    func name(in dialect: SQLDialect) -> String {
        switch (self, dialect) {
        case (.bytes, .sqlite): "BLOB"
        case (.bytes, .postgres): "BYTEA"
        }
    }
}
