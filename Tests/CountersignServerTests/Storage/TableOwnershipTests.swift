import Foundation
import Testing

/// docs/architecture.md: each table belongs to the folder whose `<Feature>Migrations.swift`
/// creates it, and no other folder's SQL reads or writes it. This reads every SQL statement in
/// the server's sources (string literals holding SQL keywords) and fails on a table named
/// outside its folder. A statement that must check another table in the same statement
/// interpolates the condition its owner publishes (`SQLUserRepository.isActive`), whose text
/// stays in the owner's file.
@Suite("Tables are read and written by the folder that owns them")
struct TableOwnershipTests {
    static let sources = BuildProducts.packageRoot.appending(path: "Sources/CountersignServer")

    /// Table → the folder whose migrations create it.
    static func owners() throws -> [String: String] {
        var owners: [String: String] = [:]
        let create = try Regex(#"CREATE TABLE(?: IF NOT EXISTS)?\s+"?(\w+)"#)
        for file in try swiftFiles() where file.hasSuffix("Migrations.swift") {
            let text = try String(contentsOf: sources.appending(path: file), encoding: .utf8)
            for match in text.matches(of: create) {
                let table = String(match.output[1].substring ?? "")
                if owners[table] == nil { owners[table] = folder(of: file) }
            }
        }
        return owners
    }

    static func swiftFiles() throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: sources.path)
        return (enumerator?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }.sorted()
    }

    static func folder(of file: String) -> String { String(file.split(separator: "/").first ?? "") }

    /// The string literals of a Swift source outside its comment lines: `"…"` on one line and
    /// `"""…"""`.
    static func literals(in source: String) throws -> [Substring] {
        let text = source.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.trimmingPrefix(while: \.isWhitespace).hasPrefix("//") }.joined(separator: "\n")
        let multiline = try Regex(#"(?s)"""(.*?)""""#)
        let single = try Regex(#""((?:[^"\\\n]|\\.)*)""#)
        var found = text.matches(of: multiline).compactMap { $0.output[1].substring }
        let outside = text.replacing(multiline, with: "")
        found += outside.matches(of: single).compactMap { $0.output[1].substring }
        return found
    }

    /// `Folder/File.swift table` for every table that the file's SQL names.
    static func namings() throws -> Set<String> {
        let owners = try owners()
        // SQL in this code base is written in capitals; prose in messages ("from clients") is not.
        let naming = try Regex(#"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+"?(\w+)"#)
        var namings: Set<String> = []
        for file in try swiftFiles() {
            let text = try String(contentsOf: sources.appending(path: file), encoding: .utf8)
            for literal in try literals(in: text) {
                for match in literal.matches(of: naming) {
                    let table = String(match.output[1].substring ?? "")
                    if owners[table] != nil { namings.insert("\(file) \(table)") }
                }
            }
        }
        return namings
    }

    /// `Folder/File.swift table` for every table of another folder that the file's SQL names.
    static func crossings() throws -> Set<String> {
        let owners = try owners()
        return try namings().filter { naming in
            let parts = naming.split(separator: " ")
            return owners[String(parts[1])] != folder(of: String(parts[0]))
        }
    }

    @Test("the migrations name an owner for every table")
    func ownersAreFound() throws {
        let owners = try Self.owners()
        #expect(owners.count >= 30)
        #expect(owners["devices"] == "Devices")
        #expect(owners["audit_events"] == "Audit")
    }

    @Test("no folder's SQL names a table another folder owns")
    func noCrossings() throws {
        let crossings = try Self.crossings()
        #expect(crossings.isEmpty, "SQL naming another folder's table; move it into the owner's store: \(crossings.sorted())")
    }

    /// docs/architecture.md: SQL is written in a table's `<Table>Repository.swift`, in a flow's
    /// `<Flow>Store.swift` (the `SQL<Flow>Store` of a flow that owns its tables outright), or in
    /// `<Feature>Migrations.swift`; the engines (`Storage/`) run it. Models, flows and routes hold
    /// none.
    @Test("SQL is written only in repositories, stores and migrations")
    func sqlFilesAreNamedSo() throws {
        let files = Set(try Self.namings().map { String($0.split(separator: " ")[0]) })
        #expect(files.count >= 20)
        let misnamed = files.filter { file in
            !["Repository.swift", "Store.swift", "Migrations.swift"].contains { file.hasSuffix($0) }
                && Self.folder(of: file) != "Storage"
        }
        #expect(misnamed.isEmpty, "SQL outside a repository, store or migrations file: \(misnamed.sorted())")
    }

    @Test("the scan sees SQL in both kinds of literal, and not prose")
    func scanSeesSQL() throws {
        let text = #"""
            let a = "SELECT id FROM devices WHERE x = 1"
            let b = """
                UPDATE users SET name = 'n'
                """
            let c = "user_code is accepted only from clients registered"
            """#
        let literals = try Self.literals(in: text).map(String.init)
        #expect(literals.contains { $0.contains("FROM devices") })
        #expect(literals.contains { $0.contains("UPDATE users") })
        let naming = try Regex(#"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+"?(\w+)"#)
        #expect(!literals.contains { $0.contains(naming) && $0.contains("clients") })
    }
}
