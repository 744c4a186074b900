import Foundation

extension SQLRow {
    /// The row as a `Decodable` type whose coding keys are the column names. Each property is
    /// looked up once, by its key's own string. Times are integer milliseconds since 1970, bytes
    /// are a `BLOB`/`BYTEA` column, booleans 0 or 1, and an enumeration's value must be one of
    /// its cases: a value the code does not know is `StorageError.corrupt`, never some case.
    public func decode<Row: Decodable>(_ type: Row.Type) throws(StorageError) -> Row {
        do {
            return try Row(from: SQLRowDecoder(row: self))
        } catch let error as StorageError {
            throw error
        } catch let DecodingError.dataCorrupted(context) {
            throw .corrupt("\(Row.self).\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)")
        } catch {
            throw .corrupt("\(Row.self): \(error)")
        }
    }

    /// One column, decoded as `decode(_:)` decodes a property.
    public func decode<Value: Decodable>(column: String, as type: Value.Type) throws(StorageError) -> Value {
        do {
            return try SQLColumnDecoder.decode(type, from: self[column], column: column)
        } catch let error as StorageError {
            throw error
        } catch let DecodingError.dataCorrupted(context) {
            throw .corrupt("column \(column): \(context.debugDescription)")
        } catch {
            throw .corrupt("column \(column): \(error)")
        }
    }
}

/// Reads a row's columns as a `Decodable`'s keyed container.
private struct SQLRowDecoder: Decoder {
    let row: SQLRow
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Container(row: row))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw StorageError.corrupt("a row is read by column name, not as a list")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw StorageError.corrupt("a row is read by column name, not as one value")
    }

    struct Container<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let row: SQLRow
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { row.columns.names.compactMap(Key.init(stringValue:)) }

        private func value(_ key: Key) throws(StorageError) -> SQLValue {
            guard let value = row[key.stringValue] else { throw .missingColumn(key.stringValue) }
            return value
        }

        func contains(_ key: Key) -> Bool { row[key.stringValue] != nil }

        func decodeNil(forKey key: Key) throws -> Bool { try value(key) == .null }

        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            try SQLColumnDecoder.string(value(key), column: key.stringValue)
        }

        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            Int(try SQLColumnDecoder.integer(value(key), column: key.stringValue))
        }

        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            try SQLColumnDecoder.integer(value(key), column: key.stringValue)
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            try SQLColumnDecoder.integer(value(key), column: key.stringValue) != 0
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try SQLColumnDecoder.decode(type, from: value(key), column: key.stringValue)
        }

        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
            let value = try value(key)
            return value == .null ? nil : try SQLColumnDecoder.string(value, column: key.stringValue)
        }

        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
            let value = try value(key)
            return value == .null ? nil : Int(try SQLColumnDecoder.integer(value, column: key.stringValue))
        }

        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
            let value = try value(key)
            return value == .null ? nil : try SQLColumnDecoder.integer(value, column: key.stringValue)
        }

        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
            let value = try value(key)
            return value == .null ? nil : try SQLColumnDecoder.integer(value, column: key.stringValue) != 0
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            let value = try value(key)
            return value == .null ? nil : try SQLColumnDecoder.decode(type, from: value, column: key.stringValue)
        }

        // The remaining number types are not stored; reading one is a fault of the row type.
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { throw unstored(type, key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { throw unstored(type, key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { throw unstored(type, key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { throw unstored(type, key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { throw unstored(type, key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { throw unstored(type, key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { throw unstored(type, key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { throw unstored(type, key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { throw unstored(type, key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { throw unstored(type, key) }

        private func unstored(_ type: Any.Type, _ key: Key) -> StorageError {
            .typeMismatch("\(key.stringValue) (\(type) is not a stored type)")
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey> {
            throw StorageError.typeMismatch("\(key.stringValue) (a column holds one value)")
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw StorageError.typeMismatch("\(key.stringValue) (a column holds one value)")
        }

        func superDecoder() throws -> any Decoder { SQLRowDecoder(row: row) }
        func superDecoder(forKey key: Key) throws -> any Decoder { SQLRowDecoder(row: row) }
    }
}

/// Decodes one column's value: the stored types directly, anything else (an enumeration) from
/// a single-value container over the value.
enum SQLColumnDecoder {
    static func string(_ value: SQLValue, column: String) throws(StorageError) -> String {
        switch value {
        case .text(let text): return text
        case .null: throw .unexpectedNull(column)
        default: throw .typeMismatch(column)
        }
    }

    static func integer(_ value: SQLValue, column: String) throws(StorageError) -> Int64 {
        switch value {
        case .integer(let number): return number
        case .null: throw .unexpectedNull(column)
        default: throw .typeMismatch(column)
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from value: SQLValue?, column: String) throws -> T {
        guard let value else { throw StorageError.missingColumn(column) }
        // The stored types whose own `Decodable` reads another shape (Date: seconds since 2001;
        // Data: a list of bytes) are read as the schema stores them.
        if T.self == Date.self {
            return Date(timeIntervalSince1970: TimeInterval(try integer(value, column: column)) / 1000) as! T
        }
        if T.self == Data.self {
            switch value {
            case .blob(let data): return data as! T
            case .null: throw StorageError.unexpectedNull(column)
            default: throw StorageError.typeMismatch(column)
            }
        }
        if T.self == String.self { return try string(value, column: column) as! T }
        if T.self == Int.self { return Int(try integer(value, column: column)) as! T }
        if T.self == Int64.self { return try integer(value, column: column) as! T }
        if T.self == Bool.self { return (try integer(value, column: column) != 0) as! T }
        if value == .null {
            // An optional property's NULL is handled by `decodeIfPresent`; here it is a
            // non-optional one, or an optional inside another type.
            if let optional = T.self as? any ExpressibleByNilLiteral.Type, let none = optional.init(nilLiteral: ()) as? T {
                return none
            }
            throw StorageError.unexpectedNull(column)
        }
        return try T(from: ValueDecoder(value: value, column: column))
    }

    /// A single value, for a `Decodable` stored in one column (an enumeration by raw value).
    private struct ValueDecoder: Decoder, SingleValueDecodingContainer {
        let value: SQLValue
        let column: String
        var codingPath: [any CodingKey] { [ColumnKey(stringValue: column)] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            throw StorageError.typeMismatch("\(column) (a column holds one value)")
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw StorageError.typeMismatch("\(column) (a column holds one value)")
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

        func decodeNil() -> Bool { value == .null }
        func decode(_ type: Bool.Type) throws -> Bool { try SQLColumnDecoder.integer(value, column: column) != 0 }
        func decode(_ type: String.Type) throws -> String { try SQLColumnDecoder.string(value, column: column) }
        func decode(_ type: Int.Type) throws -> Int { Int(try SQLColumnDecoder.integer(value, column: column)) }
        func decode(_ type: Int64.Type) throws -> Int64 { try SQLColumnDecoder.integer(value, column: column) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try SQLColumnDecoder.decode(type, from: value, column: column) }
        func decode(_ type: Double.Type) throws -> Double { throw unstored(type) }
        func decode(_ type: Float.Type) throws -> Float { throw unstored(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { throw unstored(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { throw unstored(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { throw unstored(type) }
        func decode(_ type: UInt.Type) throws -> UInt { throw unstored(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { throw unstored(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { throw unstored(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { throw unstored(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { throw unstored(type) }

        private func unstored(_ type: Any.Type) -> StorageError {
            .typeMismatch("\(column) (\(type) is not a stored type)")
        }
    }

    private struct ColumnKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
