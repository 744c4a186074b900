import Foundation

/// A version of the schema: what `schema_migrations` records once the version is applied. The
/// numbers and names are those every installation has recorded since the version was written,
/// so they never change; a new version is a new case at the end.
public enum SchemaVersion: Int64, CaseIterable, Sendable {
    case foundation = 1
    case approvals
    case push
    case factors
    case webhooks
    case tokens
    case clientKeys
    case clientNotifications
    case authorizationDetails
    case clientRateLimit
    case apnsProviderTokens
    case rs256Tokens
    case codeFlow
    case passkeys
    case console
    case consoleDevices
    case authenticatorPolicies
    case hybridSealing
    case deviceCertificates
    case signInSecurity
    case radius
    case directory
    case recovery
    case notices
    case handover
    case mail
    case rememberedBrowsers
    case authenticatorMetadata
    case riskRules
    case sharedSignals
    case riskSignals

    /// The name recorded beside the number.
    public var name: String {
        switch self {
        case .foundation: "foundation"
        case .approvals: "approvals"
        case .push: "push"
        case .factors: "factors"
        case .webhooks: "webhooks"
        case .tokens: "tokens"
        case .clientKeys: "client-keys"
        case .clientNotifications: "client-notifications"
        case .authorizationDetails: "authorization-details"
        case .clientRateLimit: "client-rate-limit"
        case .apnsProviderTokens: "apns-provider-tokens"
        case .rs256Tokens: "rs256-tokens"
        case .codeFlow: "code-flow"
        case .passkeys: "passkeys"
        case .console: "console"
        case .consoleDevices: "console-devices"
        case .authenticatorPolicies: "authenticator-policies"
        case .hybridSealing: "hybrid-sealing"
        case .deviceCertificates: "device-certificates"
        case .signInSecurity: "sign-in-security"
        case .radius: "radius"
        case .directory: "directory"
        case .recovery: "recovery"
        case .notices: "notices"
        case .handover: "handover"
        case .mail: "mail"
        case .rememberedBrowsers: "remembered-browsers"
        case .authenticatorMetadata: "authenticator-metadata"
        case .riskRules: "risk-rules"
        case .sharedSignals: "shared-signals"
        case .riskSignals: "risk-signals"
        }
    }
}

/// What one feature does to its own tables in one schema version. Statements are written once
/// for both engines (a bytes column is `\(.bytes)`); times are integer milliseconds since 1970.
public struct SchemaChange: Sendable {
    public let version: SchemaVersion
    public let statements: [SchemaStatement]

    public init(_ version: SchemaVersion, _ statements: [SchemaStatement]) {
        self.version = version
        self.statements = statements
    }
}

/// A feature's schema: its changes, oldest first. Each feature folder declares its own, in a
/// file named `<Feature>Migrations.swift`.
public struct FeatureMigrations: Sendable {
    public let feature: String
    public let changes: [SchemaChange]
}

/// The schema, as an ordered list of versions. Each version runs once, in its own transaction,
/// and is recorded in `schema_migrations`; the server applies the missing ones at start-up.
public enum Migrations {
    public struct Migration: Sendable {
        public let version: Int64
        public let name: String
        public let statements: [SchemaStatement]
    }

    /// Every feature's schema, in the order their changes run within a version: a table comes
    /// after the tables its foreign keys name.
    public static let features: [FeatureMigrations] = [
        .security, .tenants, .admin, .enrollment, .devices, .audit, .openID, .approvals, .push, .webhooks, .tokens,
        .oauth, .ciba, .notifications, .codeFlow, .signIn, .trustedIssuers, .passkeys, .console,
        .radius, .directory, .recovery, .mail, .metadata, .sharedSignals,
    ]

    /// The versions in order, each with every feature's changes of that version.
    public static let all: [Migration] = SchemaVersion.allCases.map { version in
        Migration(
            version: version.rawValue, name: version.name,
            statements: features.flatMap { feature in
                feature.changes.filter { $0.version == version }.flatMap(\.statements)
            })
    }

    /// Applies every version the database lacks, in order, up to `version` (nil: all of them).
    /// On PostgreSQL an advisory lock keeps several nodes starting at once from racing.
    public static func migrate(_ database: any Database, through version: Int64? = nil) async throws {
        try await database.transaction { executor in
            try await executor.lockForStartup()
            try await executor.run(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)")
        }
        for migration in all where migration.version <= version ?? .max {
            try await database.transaction { executor in
                try await executor.lockForStartup()
                let applied = try await executor.run("SELECT version FROM schema_migrations WHERE version = \(migration.version)")
                guard applied.isEmpty else { return }
                for statement in migration.statements where statement.runs(on: executor.dialect) {
                    try await executor.run(SQLStatement(stringLiteral: statement.text(for: executor.dialect)))
                }
                try await executor.run(
                    """
                    INSERT INTO schema_migrations (version, name, applied_at)
                    VALUES (\(migration.version), \(migration.name), \(Date()))
                    """)
            }
        }
    }

    /// The highest version applied.
    public static func currentVersion(_ database: any Database) async throws -> Int64 {
        // NULL (no row in the table) reads as version 0.
        let version = try await database.first(
            "SELECT MAX(version) AS version FROM schema_migrations", column: "version", as: Int64?.self)
        return version.flatMap { $0 } ?? 0
    }
}

extension SQLExecutor {
    /// Serialises start-up work (migrations, the master-key check, the first tenant) between
    /// nodes starting at once on one PostgreSQL database, until the transaction ends. SQLite
    /// needs nothing more: its transactions already take the database's write lock.
    func lockForStartup() async throws {
        if dialect == .postgres {
            try await run("SELECT pg_advisory_xact_lock(4242001) IS NULL AS locked")
        }
    }
}
