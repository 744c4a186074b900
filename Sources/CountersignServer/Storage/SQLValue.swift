import Foundation

/// A value bound to, or read from, a SQL statement: the few types the schema uses, identical on
/// SQLite and PostgreSQL. Times are stored as integer milliseconds since 1970 on both engines.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case text(String)
    case blob(Data)

    public init(_ value: String?) { self = value.map(SQLValue.text) ?? .null }
    public init(_ value: Int64?) { self = value.map(SQLValue.integer) ?? .null }
    public init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    public init(_ value: Data?) { self = value.map(SQLValue.blob) ?? .null }
    public init(_ value: Bool) { self = .integer(value ? 1 : 0) }
    public init(_ value: Date?) { self = value.map { .integer(Int64(($0.timeIntervalSince1970 * 1000).rounded())) } ?? .null }
}

/// One result row, by column name. The rows of one result share one index of their columns,
/// so a row is its values alone: reading a column is one look-up in the shared index.
public struct SQLRow: Sendable {
    /// The columns of a result, by name, shared by its rows.
    public final class Columns: Sendable {
        public let names: [String]
        let positions: [String: Int]

        public init(_ names: [String]) {
            self.names = names
            // A name given twice (a join's `id`) reads as its last column; statements alias
            // such columns rather than rely on it.
            var positions: [String: Int] = Dictionary(minimumCapacity: names.count)
            for (position, name) in names.enumerated() { positions[name] = position }
            self.positions = positions
        }
    }

    public let columns: Columns
    /// The values in the order of `columns.names`.
    public let cells: [SQLValue]

    public init(columns: Columns, cells: [SQLValue]) {
        precondition(columns.names.count == cells.count, "a row has one value per column")
        self.columns = columns
        self.cells = cells
    }

    /// A row from its values by name (for tests and one-off rows).
    public init(values: [String: SQLValue]) {
        let names = Array(values.keys)
        self.init(columns: Columns(names), cells: names.map { values[$0] ?? .null })
    }

    /// The value of `column`, or nil when the result has no such column.
    public subscript(column: String) -> SQLValue? {
        columns.positions[column].map { cells[$0] }
    }

    private func value(_ column: String) throws(StorageError) -> SQLValue {
        guard let value = self[column] else { throw .missingColumn(column) }
        return value
    }

    public func string(_ column: String) throws(StorageError) -> String {
        guard let value = try optionalString(column) else { throw .unexpectedNull(column) }
        return value
    }

    public func optionalString(_ column: String) throws(StorageError) -> String? {
        switch try value(column) {
        case .null: return nil
        case .text(let text): return text
        default: throw .typeMismatch(column)
        }
    }

    public func int(_ column: String) throws(StorageError) -> Int64 {
        guard let value = try optionalInt(column) else { throw .unexpectedNull(column) }
        return value
    }

    public func optionalInt(_ column: String) throws(StorageError) -> Int64? {
        switch try value(column) {
        case .null: return nil
        case .integer(let number): return number
        default: throw .typeMismatch(column)
        }
    }

    public func bool(_ column: String) throws(StorageError) -> Bool { try int(column) != 0 }

    public func data(_ column: String) throws(StorageError) -> Data {
        switch try value(column) {
        case .blob(let data): return data
        case .null: throw .unexpectedNull(column)
        default: throw .typeMismatch(column)
        }
    }

    public func optionalData(_ column: String) throws(StorageError) -> Data? {
        switch try value(column) {
        case .blob(let data): return data
        case .null: return nil
        default: throw .typeMismatch(column)
        }
    }

    /// A stored enumeration value. A value the code does not know was not written by it (or was
    /// written by a newer release): the row is `StorageError.corrupt`, never read as some case.
    public func string<Value: RawRepresentable>(_ column: String, as type: Value.Type) throws(StorageError) -> Value
    where Value.RawValue == String {
        guard let value = try optionalString(column, as: type) else { throw .unexpectedNull(column) }
        return value
    }

    public func optionalString<Value: RawRepresentable>(_ column: String, as type: Value.Type) throws(StorageError) -> Value?
    where Value.RawValue == String {
        guard let text = try optionalString(column) else { return nil }
        guard let value = Value(rawValue: text) else { throw .corrupt("column \(column) holds no \(Value.self)") }
        return value
    }

    /// A space-separated list of enumeration values, each of which must be known.
    public func words<Value: RawRepresentable>(_ column: String, as type: Value.Type) throws(StorageError) -> [Value]
    where Value.RawValue == String {
        try string(column).split(separator: " ").map { (word) throws(StorageError) -> Value in
            guard let value = Value(rawValue: String(word)) else { throw .corrupt("column \(column) holds no \(Value.self)") }
            return value
        }
    }

    public func date(_ column: String) throws(StorageError) -> Date {
        Date(timeIntervalSince1970: TimeInterval(try int(column)) / 1000)
    }

    public func optionalDate(_ column: String) throws(StorageError) -> Date? {
        try optionalInt(column).map { Date(timeIntervalSince1970: TimeInterval($0) / 1000) }
    }
}

/// Failures of the storage layer. `uniqueViolation` is the one callers act on; the rest are
/// faults that surface as 500s.
public enum StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    case uniqueViolation
    case missingColumn(String)
    case unexpectedNull(String)
    case typeMismatch(String)
    case corrupt(String)
    case unavailable(String)

    public var description: String {
        switch self {
        case .uniqueViolation: "a unique constraint was violated"
        case .missingColumn(let column): "column \(column) is missing from the result"
        case .unexpectedNull(let column): "column \(column) is unexpectedly NULL"
        case .typeMismatch(let column): "column \(column) has an unexpected type"
        case .corrupt(let what): "stored data is corrupt: \(what)"
        case .unavailable(let why): "the database is unavailable: \(why)"
        }
    }
}
