import Synchronization

/// Writes whose rows nobody reads, sent to the database as one statement on PostgreSQL.
///
/// Every statement is a round trip to PostgreSQL, with its own work on both sides (about 30 µs
/// of PostgreSQL's CPU alone, BENCHMARKS.md: "Writes together"). Writes that only need to be
/// stored together — a request, its deliveries and its announcement to the other
/// nodes — go as one statement with data-modifying `WITH` clauses:
///
/// ```sql
/// WITH w1 AS (INSERT INTO approval_transactions …), w2 AS (INSERT INTO approval_deliveries …)
/// SELECT pg_notify($20, $21) IS NULL AS sent
/// ```
///
/// PostgreSQL runs every data-modifying clause once and to completion, in one snapshot, and
/// checks foreign keys at the end of the statement, so a row may reference one inserted by
/// another clause. Within that snapshot no clause sees what another writes: statements that read
/// what another of them writes, or write the same rows, do not belong together. SQLite, where a
/// statement is no round trip, runs them one after another in the order given, so a row goes
/// after the row it references.
extension SQLStatement {
    /// `statements` as one PostgreSQL statement: every `INSERT`, `UPDATE` or `DELETE` a `WITH`
    /// clause, and the one `SELECT` among them (if any, else the last statement) the primary
    /// statement, each statement's `$n` placeholders renumbered after those before it. A `SELECT`
    /// cannot be a `WITH` clause, since PostgreSQL does not run a clause the statement does not
    /// read; two of them stop the program.
    static func together(_ statements: [SQLStatement]) -> SQLStatement {
        precondition(!statements.isEmpty, "nothing to run")
        if statements.count == 1 { return statements[0] }
        let selects = statements.indices.filter { statements[$0].verb == .select }
        precondition(selects.count <= 1, "at most one SELECT can go with other statements")
        precondition(
            statements.allSatisfy { $0.verb != nil },
            "only INSERT, UPDATE, DELETE and SELECT statements go together")
        let primary = selects.first ?? statements.count - 1
        let ordered = statements.indices.filter { $0 != primary }.map { statements[$0] } + [statements[primary]]
        var text = "WITH "
        var binds: [SQLValue] = []
        for (index, statement) in ordered.enumerated() {
            let renumbered = statement.renumbered(after: binds.count)
            if index == ordered.count - 1 {
                text += " " + renumbered
            } else {
                if index > 0 { text += ", " }
                text += "w\(index + 1) AS (" + renumbered + ")"
            }
            binds += statement.binds
        }
        return SQLStatement(text: text, binds: binds)
    }

    enum Verb { case insert, update, delete, select }

    /// The statement's first keyword, if it is one that can go together.
    var verb: Verb? {
        let first = text.drop(while: \.isWhitespace).prefix(while: \.isLetter).uppercased()
        switch first {
        case "INSERT": return .insert
        case "UPDATE": return .update
        case "DELETE": return .delete
        case "SELECT": return .select
        default: return nil
        }
    }

    /// The text with every placeholder `$n` written `$(n + offset)`. Quoted text — `'…'` and
    /// `E'…'` literals, `"…"` identifiers, `--` comments, `/* … */` comments (not nested) and
    /// `$tag$ … $tag$` strings — is copied as it is.
    func renumbered(after offset: Int) -> String {
        guard offset > 0 else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var index = 0
        func copy(through end: Int) {
            out.append(contentsOf: bytes[index..<end])
            index = end
        }
        /// The index just past the first `terminator` at or after `from`, or the end.
        func past(_ terminator: [UInt8], from: Int) -> Int {
            var at = from
            while at + terminator.count <= bytes.count {
                if bytes[at..<at + terminator.count].elementsEqual(terminator) { return at + terminator.count }
                at += 1
            }
            return bytes.count
        }
        while index < bytes.count {
            let byte = bytes[index]
            let next = index + 1 < bytes.count ? bytes[index + 1] : 0
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                // A doubled quote inside is an escaped one: the scan ends at a quote that is
                // not followed by another. In an escape string (`E'…'`) a backslash escapes
                // the byte after it too.
                let escapes = byte == UInt8(ascii: "'") && index > 0
                    && (bytes[index - 1] == UInt8(ascii: "E") || bytes[index - 1] == UInt8(ascii: "e"))
                    && (index == 1 || !Self.inDollarTag(bytes[index - 2]))
                var at = index + 1
                while at < bytes.count {
                    if escapes, bytes[at] == UInt8(ascii: "\\") { at += 2; continue }
                    if bytes[at] == byte {
                        if at + 1 < bytes.count, bytes[at + 1] == byte { at += 2; continue }
                        at += 1
                        break
                    }
                    at += 1
                }
                copy(through: min(at, bytes.count))
            case UInt8(ascii: "-") where next == UInt8(ascii: "-"):
                copy(through: past([UInt8(ascii: "\n")], from: index + 2))
            case UInt8(ascii: "/") where next == UInt8(ascii: "*"):
                copy(through: past([UInt8(ascii: "*"), UInt8(ascii: "/")], from: index + 2))
            case UInt8(ascii: "$") where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next):
                var end = index + 1
                var number = 0
                while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) {
                    number = number * 10 + Int(bytes[end] - UInt8(ascii: "0"))
                    end += 1
                }
                out.append(contentsOf: Array("$\(number + offset)".utf8))
                index = end
            case UInt8(ascii: "$"):
                // A dollar-quoted string: `$tag$` (the tag may be empty) up to the same again.
                var end = index + 1
                while end < bytes.count, Self.inDollarTag(bytes[end]) { end += 1 }
                if end < bytes.count, bytes[end] == UInt8(ascii: "$") {
                    let tag = Array(bytes[index...end])
                    copy(through: past(tag, from: end + 1))
                } else {
                    copy(through: index + 1)
                }
            default:
                copy(through: index + 1)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension SQLStatement {
    /// A byte of a dollar quote's tag or of a name: a letter, a digit, `_`, or part of a letter
    /// beyond ASCII.
    fileprivate static func inDollarTag(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), 0x80...: true
        default: false
        }
    }
}

/// An executor that keeps the statements it is given instead of running them, and answers each
/// with no rows: for collecting the writes of repositories that do not read what their
/// statements return, to run them together (`SQLExecutor.run(together:)`).
final class SQLStatementCollector: SQLExecutor {
    let dialect: SQLDialect
    private let kept = Mutex<[SQLStatement]>([])

    init(dialect: SQLDialect) {
        self.dialect = dialect
    }

    /// The statements kept so far, which are then forgotten.
    func take() -> [SQLStatement] {
        kept.withLock { kept in
            defer { kept = [] }
            return kept
        }
    }

    @discardableResult
    func run(_ statement: SQLStatement) async throws -> [SQLRow] {
        kept.withLock { $0.append(statement) }
        return []
    }

    /// Statements kept here have not run, so nothing can wait for their commit: a repository that
    /// registers an action after commit is not one whose writes can be collected.
    func afterCommit(_ action: @escaping @Sendable () -> Void) {
        preconditionFailure("writes collected to run together cannot carry an action after their commit")
    }
}

extension SQLExecutor {
    /// Runs writes whose rows nobody reads: one statement on PostgreSQL
    /// (`SQLStatement.together`), one after another on SQLite. Nothing runs for none.
    func run(together statements: [SQLStatement]) async throws {
        guard !statements.isEmpty else { return }
        if dialect == .postgres {
            try await run(SQLStatement.together(statements))
        } else {
            for statement in statements { try await run(statement) }
        }
    }
}

extension Database {
    /// Runs writes whose rows nobody reads, all or none: on PostgreSQL one statement, which needs
    /// no transaction around it; on SQLite one transaction.
    func run(atomically statements: [SQLStatement]) async throws {
        guard !statements.isEmpty else { return }
        if dialect == .postgres || statements.count == 1 {
            try await run(together: statements)
        } else {
            try await transaction { executor in
                for statement in statements { try await executor.run(statement) }
            }
        }
    }
}
