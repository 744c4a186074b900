@_spi(Benchmarks) import CountersignServer
import CountersignCore
import Foundation

/// The statements `countersign-bench sql` times, each written twice: by hand (a constant text
/// with `$n` placeholders, an array of binds, columns read one by one) and as the repositories
/// write them (an interpolated `SQLStatement`, rows decoded as `Decodable`). Both read into
/// `ApprovalTransactionRow`.
struct SQLBenchFixture: Sendable {
    typealias Statement = @Sendable (any Database, Int) async throws -> Void

    let tenantID: String
    /// The row every SELECT and UPDATE reads.
    let rowID: String

    static let columns = ApprovalTransactionRow.columns
    static let selectText = "SELECT \(columns) FROM approval_transactions WHERE id = $1"
    static let insertText = """
        INSERT INTO approval_transactions (id, auth_req_id_hash, tenant_id, client_id, user_id, scope, acr_values,
            binding_message, details, details_sha256, challenge, status, poll_interval, created_at, expires_at,
            verification, match_number, delivery_mode, auth_req_id_sealed, notification_token_sealed,
            authorization_details)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
        """
    static let updateText = """
        UPDATE approval_transactions SET last_polled_at = $1, poll_interval = $2
        WHERE id = $3 AND status = 'pending' RETURNING id
        """

    static func make(on database: any Database) async throws -> SQLBenchFixture {
        let now = Date()
        let tenantID = "ten_bench_\(UUID().uuidString.prefix(8))"
        try await database.run(
            """
            INSERT INTO tenants (id, slug, display_name, signing_key_sealed, signing_key_jwk, created_at, updated_at)
            VALUES (\(tenantID), \(tenantID), 'Bench', \(Data([1])), '{}', \(now), \(now))
            """)
        let fixture = SQLBenchFixture(tenantID: tenantID, rowID: "txn_bench_row")
        try await fixture.insertByHand(database, -1)
        return fixture
    }

    var selectByHand: Statement {
        { database, _ in
            guard let row = try await database.run(SQLStatement(text: Self.selectText, binds: [.text(rowID)])).first else {
                throw StorageError.corrupt("the bench row is missing")
            }
            _ = try ApprovalTransactionRow(row: row)
        }
    }

    var selectTyped: Statement {
        { database, _ in
            guard try await database.first(
                "SELECT \(raw: Self.columns) FROM approval_transactions WHERE id = \(rowID)", as: ApprovalTransactionRow.self
            ) != nil else {
                throw StorageError.corrupt("the bench row is missing")
            }
        }
    }

    var insertByHand: Statement {
        { database, index in
            let id = index < 0 ? rowID : "txn_hand_\(index)"
            let now = Date()
            try await database.run(SQLStatement(
                text: Self.insertText,
                binds: [.text(id), .blob(Data(id.utf8)), .text(tenantID), .text("cli_bench"), .text("usr_bench"),
                        .text("openid profile"), .null, .text("Pay 12 EUR"), .text(Self.details), .text("digest"),
                        .text("challenge"), .text(ApprovalTransaction.Status.pending.rawValue), .integer(5), now.sqlValue,
                        now.addingTimeInterval(300).sqlValue, .null, .integer(42), .null, .null, .null, .null]))
        }
    }

    var insertTyped: Statement {
        { database, index in
            let id = "txn_typed_\(index)"
            let now = Date()
            let none: String? = nil
            let noBytes: Data? = nil
            try await database.run(
                """
                INSERT INTO approval_transactions (id, auth_req_id_hash, tenant_id, client_id, user_id, scope, acr_values,
                    binding_message, details, details_sha256, challenge, status, poll_interval, created_at, expires_at,
                    verification, match_number, delivery_mode, auth_req_id_sealed, notification_token_sealed,
                    authorization_details)
                VALUES (\(id), \(Data(id.utf8)), \(tenantID), \("cli_bench"), \("usr_bench"), \("openid profile"), \(none),
                    \("Pay 12 EUR"), \(Self.details), \("digest"), \("challenge"), \(ApprovalTransaction.Status.pending),
                    \(5), \(now), \(now.addingTimeInterval(300)), \(none), \(Int64(42)), \(none), \(noBytes), \(noBytes),
                    \(none))
                """)
        }
    }

    var updateByHand: Statement {
        { database, index in
            let rows = try await database.run(
                SQLStatement(text: Self.updateText, binds: [Date().sqlValue, .integer(Int64(5 + index % 2)), .text(rowID)]))
            guard !rows.isEmpty else { throw StorageError.corrupt("the bench row is missing") }
        }
    }

    var updateTyped: Statement {
        { database, index in
            guard try await database.first(
                """
                UPDATE approval_transactions SET last_polled_at = \(Date()), poll_interval = \(5 + index % 2)
                WHERE id = \(rowID) AND status = 'pending' RETURNING id
                """, column: "id", as: String.self
            ) != nil else { throw StorageError.corrupt("the bench row is missing") }
        }
    }

    /// About the size of a real request's canonical details.
    static let details = String(repeating: "{\"binding_message\":\"Pay 12 EUR\",\"client\":\"Shop\"}", count: 8)
}
