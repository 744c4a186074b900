import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// A status, mode or kind read from a row that the code does not know is a fault of the stored
/// data, reported as `StorageError.corrupt`: an unknown approval status must never read as a
/// denial, an unknown device status as a deleted device, an unknown right as no right.
@Suite("Stored enumerations")
struct StoredEnumerationTests {
    @Test("a row helper refuses a value its enumeration does not know")
    func rowRefusesUnknownValue() throws {
        let row = SQLRow(values: ["status": .text("maybe"), "rights": .text("audit:read sideways"), "mode": .null])
        #expect(throws: StorageError.corrupt("column status holds no Status")) {
            try row.string("status", as: ApprovalTransaction.Status.self)
        }
        #expect(throws: StorageError.corrupt("column rights holds no AdminRight")) {
            try row.words("rights", as: AdminRight.self)
        }
        #expect(try row.optionalString("mode", as: Client.DeliveryMode.self) == nil)
        #expect(throws: StorageError.unexpectedNull("mode")) {
            try row.string("mode", as: Client.DeliveryMode.self)
        }
    }

    /// A column altered behind the code's back, and the read that must refuse it.
    struct Tampering: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let statement: SQLStatement
        let read: @Sendable (Seeded, any SQLExecutor) async throws -> Void
    }

    struct Seeded: Sendable {
        let tenantID: String
        let userID: String
        let deviceID: String
        let clientID: String
        let transactionID: String
    }

    static let tamperings: [Tampering] = [
        Tampering(testDescription: "approval status", statement: "UPDATE approval_transactions SET status = 'maybe'") {
            _ = try await SQLApprovalTransactionRepository().find(id: $0.transactionID, on: $1)
        },
        Tampering(testDescription: "approval deny reason", statement: "UPDATE approval_transactions SET deny_reason = 'bored'") {
            _ = try await SQLApprovalTransactionRepository().find(id: $0.transactionID, on: $1)
        },
        Tampering(testDescription: "approval delivery mode", statement: "UPDATE approval_transactions SET delivery_mode = 'fax'") {
            _ = try await SQLApprovalTransactionRepository().find(id: $0.transactionID, on: $1)
        },
        Tampering(testDescription: "user status", statement: "UPDATE users SET status = 'frozen'") {
            _ = try await SQLUserRepository().find(id: $0.userID, tenantID: $0.tenantID, on: $1)
        },
        Tampering(testDescription: "device status", statement: "UPDATE devices SET status = 'lost'") {
            _ = try await SQLDeviceRepository().find(id: $0.deviceID, on: $1)
        },
        Tampering(testDescription: "device platform", statement: "UPDATE devices SET platform = 'toaster'") {
            _ = try await SQLDeviceRepository().find(id: $0.deviceID, on: $1)
        },
        Tampering(testDescription: "device push provider", statement: "UPDATE devices SET push_provider = 'pigeon'") {
            _ = try await SQLDeviceRepository().find(id: $0.deviceID, on: $1)
        },
        Tampering(testDescription: "client delivery mode", statement: "UPDATE clients SET delivery_mode = 'fax'") {
            _ = try await SQLClientRepository().find(id: $0.clientID, tenantID: $0.tenantID, on: $1)
        },
        Tampering(testDescription: "client authentication method",
                  statement: "UPDATE clients SET token_endpoint_auth_method = 'handshake'") {
            _ = try await SQLClientRepository().find(id: $0.clientID, tenantID: $0.tenantID, on: $1)
        },
    ]

    @Test("an unknown value in a stored row is StorageError.corrupt",
          arguments: Engine.available.flatMap { engine in tamperings.map { (engine, $0) } })
    func unknownStoredValueIsCorrupt(engine: Engine, tampering: Tampering) async throws {
        try await ScratchDatabase.with(engine) { database in
            try await Migrations.migrate(database)
            let seeded = try await Self.seed(database)
            // Read back untouched first: the seed itself is readable.
            try await tampering.read(seeded, database)
            try await database.run(tampering.statement)
            let error = await #expect(throws: StorageError.self) { try await tampering.read(seeded, database) }
            if case .corrupt = error {} else {
                Issue.record("expected StorageError.corrupt, got \(String(describing: error))")
            }
        }
    }

    private static func seed(_ database: any Database) async throws -> Seeded {
        let date = Date()
        let tenant = Tenant(id: Identifier.make("ten", at: date), slug: "acme", displayName: "Acme", isDefault: true,
                            signingKey: ECPublicJWK(x: "x", y: "y"), createdAt: date, updatedAt: date)
        try await SQLTenantRepository().insert(tenant, sealedSigningKey: Data([1, 2, 3]), on: database)
        let user = User(id: Identifier.make("usr", at: date), tenantID: tenant.id, username: "alice", displayName: nil,
                        status: .active, createdAt: date, updatedAt: date)
        try await SQLUserRepository().insert(user, on: database)
        let key = ECPublicJWK(x: "a", y: "b")
        let device = Device(
            id: Identifier.make("dev", at: date), tenantID: tenant.id, userID: user.id, name: "phone", platform: .ios,
            signingKey: key, encryptionKey: key, push: PushRegistration(provider: .apns, token: "token"),
            pushTokenValid: true, status: .active, createdAt: date, updatedAt: date)
        try await SQLDeviceRepository().insert(device, on: database)
        let client = Client(
            id: Identifier.make("cli", at: date), tenantID: tenant.id, name: "shop", scopes: ["openid"],
            deliveryMode: .poll, notificationEndpoint: nil, createdAt: date, updatedAt: date)
        try await SQLClientRepository().insert(client, secretHash: Data([4, 5, 6]), on: database)
        let transaction = ApprovalTransaction(
            id: Identifier.make("txn", at: date), authReqIDHash: Data([7, 8, 9]), tenantID: tenant.id, clientID: client.id,
            userID: user.id, scope: ["openid"], acrValues: nil, bindingMessage: nil, details: "{}", detailsDigest: "digest",
            challenge: "challenge", status: .pending, pollInterval: 5, lastPolledAt: nil, createdAt: date,
            expiresAt: date.addingTimeInterval(300), decidedAt: nil, decidedByDevice: nil, response: nil, factors: nil,
            exchangedAt: nil)
        try await SQLApprovalTransactionRepository().insert(transaction, deliveries: [], on: database)
        return Seeded(tenantID: tenant.id, userID: user.id, deviceID: device.id, clientID: client.id,
                      transactionID: transaction.id)
    }
}
