import ArgumentParser
import CountersignCommandLine
import CountersignServer
import Foundation
import Logging
import NIOCore

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Countersign server (SQLite in the data directory unless --database-url is given).",
        discussion: """
            Every option can also be set with an environment variable (named in its help). The master key is read \
            from COUNTERSIGN_MASTER_KEY (32 bytes, base64) or from master.key in the data directory, which the \
            first start creates.
            """)

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let level = try options.logLevelValue()
        let configuration = try options.configuration()
        let memoryReturnSeconds = try options.memoryReturnSeconds()
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "countersign")
        let server: CountersignServer
        do {
            server = try await CountersignServer.make(configuration: configuration, logger: logger)
        } catch {
            logger.critical("Countersign cannot start: \(error)")
            throw ExitCode.failure
        }
        let memoryReturn = FreeMemory.returnEvery(memoryReturnSeconds, logger: logger)
        defer { memoryReturn?.cancel() }
        let database = configuration.databaseURL == nil ? "SQLite at \(configuration.sqlitePath)" : "PostgreSQL"
        logger.info("starting", metadata: ["database": "\(database)", "data_dir": "\(configuration.dataDirectory.path)"])
        Task {
            guard let port = await server.port() else { return }
            // Shown only once the server listens (a start that fails withdraws the key instead),
            // and before the line that says it listens, which scripts wait for.
            if let key = server.bootstrapAdminKey { Self.show(bootstrapAdminKey: key) }
            let origin = server.origin.base
            logger.notice("listening on \(configuration.host):\(port); public URL \(origin)")
            if origin.hasPrefix("http://"), !["127.0.0.1", "localhost", "::1"].contains(configuration.host) {
                logger.warning("serving plain http on a non-loopback address: use a TLS-terminating proxy and --public-url https://…")
            } else if origin.hasPrefix("http://") {
                logger.notice("plain http on loopback: for local development only")
            }
        }
        let ports = ["\(configuration.port) (HTTP)"] + [configuration.radiusPort.map { "\($0) (RADIUS, UDP)" },
                                                     configuration.radsec.map { "\($0.port) (RadSec, TCP)" }].compactMap { $0 }
        do {
            try await server.run()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            if ports.count == 1 {
                logger.critical("Countersign cannot start: \(configuration.host):\(configuration.port) is already in use")
            } else {
                logger.critical("Countersign cannot start: a port it listens on at \(configuration.host) is already in use, one of \(ports.joined(separator: ", "))")
            }
            throw ExitCode.failure
        } catch let error as IOError where error.errnoCode == EACCES {
            logger.critical("Countersign cannot start: no permission to listen on \(configuration.host):\(configuration.port)")
            throw ExitCode.failure
        } catch let error as IOError where error.errnoCode == EADDRNOTAVAIL {
            logger.critical("Countersign cannot start: \(configuration.host) is not an address of this machine")
            throw ExitCode.failure
        }
        logger.notice("stopped")
    }

    /// Printed, never logged: the console is the one place this secret appears.
    private static func show(bootstrapAdminKey key: String) {
        FileHandle.standardOutput.write(Data("""

            ┌──────────────────────────────────────────────────────────────────────────────┐
              First start: a system admin API key was created. It is shown only this once.
              export COUNTERSIGN_ADMIN_KEY='\(key)'
            └──────────────────────────────────────────────────────────────────────────────┘


            """.utf8))
    }
}

/// A whole number of seconds within `range`, or nil when not set.
private func bounded(_ text: String?, _ range: ClosedRange<Int>, _ name: String, unit: String = "seconds") throws -> Int? {
    guard let text else { return nil }
    guard let value = Int(text), range.contains(value) else {
        throw ValidationError("\(name) must be a whole number of \(unit) from \(range.lowerBound) to \(range.upperBound)")
    }
    return value
}

/// The options that say which database and master key the server uses, shared by `serve`
/// and `recover-admin-key`.
struct ServerOptions: ParsableArguments {
    @Option(help: "Address to listen on (COUNTERSIGN_HOST). Default 127.0.0.1.")
    var host: String?

    @Option(help: "Port to listen on (COUNTERSIGN_PORT). Default 8080.")
    var port: Int?

    @Option(name: .customLong("data-dir"), help: "Data directory, created on first run (COUNTERSIGN_DATA_DIR). Default ./data.")
    var dataDirectory: String?

    @Option(name: .customLong("database-url"), help: "postgres://user:password@host:5432/database to use PostgreSQL (COUNTERSIGN_DATABASE_URL).")
    var databaseURL: String?

    @Option(name: .customLong("database-pool-size"), help: "PostgreSQL connections the node opens and keeps, 4 to 500 (COUNTERSIGN_DATABASE_POOL_SIZE). Default 20.")
    var databasePoolSize: Int?

    @Option(name: .customLong("database-wait"), help: "Seconds a request waits for a PostgreSQL connection before it is answered 503, 1 to 60 (COUNTERSIGN_DATABASE_WAIT). Default 3.")
    var databaseWait: Int?

    @Option(name: .customLong("idle-timeout"), help: "Seconds an HTTP connection may stay open with no request on it, 1 to 3600 (COUNTERSIGN_IDLE_TIMEOUT). Default 60.")
    var idleTimeout: Int?

    @Option(name: .customLong("header-timeout"), help: "Seconds a client may take to send a request's headers, 1 to 3600 (COUNTERSIGN_HEADER_TIMEOUT). Default 10.")
    var headerTimeout: Int?

    @Option(name: .customLong("body-timeout"), help: "Seconds a request body may go without a byte while the server waits for one, 1 to 3600 (COUNTERSIGN_BODY_TIMEOUT). Default 30.")
    var bodyTimeout: Int?

    @Option(name: .customLong("max-connections"), help: "Most HTTP connections open at once, 16 to 1000000, lowered to fit the open file limit (COUNTERSIGN_MAX_CONNECTIONS). Default 10000.")
    var maxConnections: Int?

    @Option(name: .customLong("public-url"), help: "The URL devices and clients reach this server at (COUNTERSIGN_PUBLIC_URL). Default http://host:port.")
    var publicURL: String?

    @Option(name: .customLong("failed-authentication-limit"), help: "Failed authentications allowed per address, and per client or admin key id, in a minute, 0 to 100000; 0 allows any number (COUNTERSIGN_FAILED_AUTHENTICATION_LIMIT). Default 30.")
    var failedAuthenticationLimit: Int?

    @Option(name: .customLong("signature-window"), help: "Seconds a device signature's time may differ from the server's, 30 to 3600 (COUNTERSIGN_SIGNATURE_WINDOW). Default 300.")
    var signatureWindow: Int?

    @Option(name: .customLong("ticket-lifetime"), help: "Default lifetime of enrollment tickets in seconds, 60 to 86400 (COUNTERSIGN_TICKET_LIFETIME). Default 600.")
    var ticketLifetime: Int?

    @Option(name: .customLong("token-key-rotation-days"), help: "Days a token-signing key signs before a new one replaces it, 1 to 3650 (COUNTERSIGN_TOKEN_KEY_ROTATION_DAYS). Default 90.")
    var tokenKeyRotationDays: Int?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (COUNTERSIGN_LOG_LEVEL). Default info.")
    var logLevel: String?

    @Option(name: .customLong("apns-url"), help: "APNs production base URL (COUNTERSIGN_APNS_URL). Default https://api.push.apple.com.")
    var apnsURL: String?

    @Option(name: .customLong("apns-sandbox-url"), help: "APNs development base URL (COUNTERSIGN_APNS_SANDBOX_URL). Default https://api.sandbox.push.apple.com.")
    var apnsSandboxURL: String?

    @Option(name: .customLong("fcm-url"), help: "FCM base URL (COUNTERSIGN_FCM_URL). Default https://fcm.googleapis.com.")
    var fcmURL: String?

    @Option(name: .customLong("fcm-token-url"), help: "Google's OAuth token endpoint (COUNTERSIGN_FCM_TOKEN_URL). Default https://oauth2.googleapis.com/token.")
    var fcmTokenURL: String?

    @Option(name: .customLong("push-ca-file"), help: "PEM file of CAs to trust for the push services instead of the system's (COUNTERSIGN_PUSH_CA_FILE).")
    var pushCAFile: String?

    @Option(name: .customLong("memory-return-interval"), help: "Seconds between returns of the allocator's free memory to the system, 0 to 3600; 0 never returns it (COUNTERSIGN_MEMORY_RETURN_INTERVAL). Default 30.")
    var memoryReturnInterval: Int?

    @Option(name: .customLong("radius-port"), help: "UDP port to answer RADIUS on, at the same address, 1812 by convention; 0 picks a free one (COUNTERSIGN_RADIUS_PORT). Default: no RADIUS.")
    var radiusPort: Int?

    @Option(name: .customLong("radsec-port"), help: "TCP port to answer RADIUS over TLS (RadSec) on, 2083 by convention; needs the three --radsec files (COUNTERSIGN_RADSEC_PORT). Default: no RadSec.")
    var radsecPort: Int?

    @Option(name: .customLong("radsec-certificate"), help: "PEM file of RadSec's server certificate chain (COUNTERSIGN_RADSEC_CERTIFICATE).")
    var radsecCertificate: String?

    @Option(name: .customLong("radsec-key"), help: "PEM file of RadSec's server private key (COUNTERSIGN_RADSEC_KEY).")
    var radsecKey: String?

    @Option(name: .customLong("radsec-client-ca"), help: "PEM file of the CAs RadSec clients' certificates must chain to (COUNTERSIGN_RADSEC_CLIENT_CA).")
    var radsecClientCA: String?

    @Option(name: .customLong("fido-metadata"), help: "The FIDO Metadata Service BLOB passkey registrations are checked against: an https URL (https://mds3.fidoalliance.org/) or a file; needs --fido-metadata-root (COUNTERSIGN_FIDO_METADATA). Default: none.")
    var fidoMetadata: String?

    @Option(name: .customLong("fido-metadata-root"), help: "PEM file of the roots the metadata BLOB's signing chain must end at; the FIDO Alliance's is GlobalSign Root CA - R3 (COUNTERSIGN_FIDO_METADATA_ROOT).")
    var fidoMetadataRoot: String?

    @Flag(name: .customLong("no-push-dispatch"), help: "Queue push notifications, webhook events, Security Event Tokens and mail but leave sending them to other nodes (COUNTERSIGN_PUSH_DISPATCH=false).")
    var noPushDispatch = false

    func logLevelValue() throws -> Logger.Level {
        let levelText = setting(logLevel, "COUNTERSIGN_LOG_LEVEL") ?? "info"
        guard let level = Logger.Level(rawValue: levelText) else {
            throw ValidationError("log level \(levelText) is not one of trace, debug, info, notice, warning, error, critical")
        }
        return level
    }

    func memoryReturnSeconds() throws -> Int {
        try bounded(setting(memoryReturnInterval.map(String.init), "COUNTERSIGN_MEMORY_RETURN_INTERVAL"), 0...3600,
                    "memory return interval") ?? FreeMemory.defaultInterval
    }

    func configuration() throws -> ServerConfiguration {
        var configuration = ServerConfiguration(
            dataDirectory: URL(fileURLWithPath: setting(dataDirectory, "COUNTERSIGN_DATA_DIR") ?? "data"))
        configuration.host = setting(host, "COUNTERSIGN_HOST") ?? "127.0.0.1"
        if let text = setting(port.map(String.init), "COUNTERSIGN_PORT") {
            guard let value = Int(text), (0...65535).contains(value) else { throw ValidationError("port \(text) is not a port") }
            configuration.port = value
        }
        if let text = setting(radiusPort.map(String.init), "COUNTERSIGN_RADIUS_PORT") {
            guard let value = Int(text), (0...65535).contains(value) else {
                throw ValidationError("RADIUS port \(text) is not a port")
            }
            configuration.radiusPort = value
        }
        if let text = setting(radsecPort.map(String.init), "COUNTERSIGN_RADSEC_PORT") {
            guard let value = Int(text), (0...65535).contains(value) else {
                throw ValidationError("RadSec port \(text) is not a port")
            }
            guard let certificate = setting(radsecCertificate, "COUNTERSIGN_RADSEC_CERTIFICATE"),
                  let key = setting(radsecKey, "COUNTERSIGN_RADSEC_KEY"),
                  let clientCA = setting(radsecClientCA, "COUNTERSIGN_RADSEC_CLIENT_CA") else {
                throw ValidationError("RadSec needs --radsec-certificate, --radsec-key and --radsec-client-ca")
            }
            configuration.radsec = RadSecConfiguration(
                port: value, certificateChainFile: certificate, privateKeyFile: key, clientCAFile: clientCA)
        }
        if let source = setting(fidoMetadata, "COUNTERSIGN_FIDO_METADATA") {
            guard let rootFile = setting(fidoMetadataRoot, "COUNTERSIGN_FIDO_METADATA_ROOT") else {
                throw ValidationError("--fido-metadata needs --fido-metadata-root, the PEM file of the roots its BLOB is signed under")
            }
            do {
                configuration.metadata = try MetadataConfiguration(source: source, rootPEMFile: rootFile)
            } catch {
                throw ValidationError("--fido-metadata-root \(rootFile) is not a PEM file of certificates: \(error)")
            }
        }
        if let text = setting(publicURL, "COUNTERSIGN_PUBLIC_URL") {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil,
                  url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil,
                  url.user == nil, url.password == nil else {
                throw ValidationError("public URL \(text) must be an origin: http(s)://host[:port], without credentials, path or query")
            }
            configuration.publicURL = url
        }
        configuration.signatureWindow = TimeInterval(
            try bounded(setting(signatureWindow.map(String.init), "COUNTERSIGN_SIGNATURE_WINDOW"), 30...3600, "signature window")
                ?? 300)
        configuration.enrollmentTicketLifetime = TimeInterval(
            try bounded(setting(ticketLifetime.map(String.init), "COUNTERSIGN_TICKET_LIFETIME"), 60...86_400, "ticket lifetime")
                ?? 600)
        if let text = setting(tokenKeyRotationDays.map(String.init), "COUNTERSIGN_TOKEN_KEY_ROTATION_DAYS") {
            guard let days = Int(text), (1...3650).contains(days) else {
                throw ValidationError("token key rotation must be a whole number of days from 1 to 3650")
            }
            configuration.tokenSigningKeyRotation = TimeInterval(days * 86_400)
        }
        configuration.databaseURL = setting(databaseURL, "COUNTERSIGN_DATABASE_URL")
        let poolSizes = PostgresDatabase.poolSizes
        configuration.databasePoolSize = try bounded(
            setting(databasePoolSize.map(String.init), "COUNTERSIGN_DATABASE_POOL_SIZE"), poolSizes, "database pool size", unit: "connections")
            ?? PostgresDatabase.defaultPoolSize
        if let seconds = try bounded(
            setting(databaseWait.map(String.init), "COUNTERSIGN_DATABASE_WAIT"), PostgresDatabase.connectionWaits, "database wait") {
            configuration.databaseConnectionWait = .seconds(seconds)
        }
        let timeouts: [(Int?, String, String, WritableKeyPath<ConnectionLimits, Duration>)] = [
            (idleTimeout, "COUNTERSIGN_IDLE_TIMEOUT", "idle timeout", \.idleTimeout),
            (headerTimeout, "COUNTERSIGN_HEADER_TIMEOUT", "header timeout", \.headerTimeout),
            (bodyTimeout, "COUNTERSIGN_BODY_TIMEOUT", "body timeout", \.bodyProgressTimeout),
        ]
        for (flag, variable, name, path) in timeouts {
            if let seconds = try bounded(setting(flag.map(String.init), variable), ConnectionLimits.timeoutSeconds, name) {
                configuration.connections[keyPath: path] = .seconds(seconds)
            }
        }
        configuration.connections.maximumConnections = try bounded(
            setting(maxConnections.map(String.init), "COUNTERSIGN_MAX_CONNECTIONS"), ConnectionLimits.connectionCaps,
            "max connections", unit: "connections")
        configuration.failedAuthenticationLimit = try bounded(
            setting(failedAuthenticationLimit.map(String.init), "COUNTERSIGN_FAILED_AUTHENTICATION_LIMIT"), 0...100_000,
            "failed authentication limit", unit: "failures") ?? FailedAuthenticationThrottle.defaultLimit
        configuration.masterKey = ProcessInfo.processInfo.environment["COUNTERSIGN_MASTER_KEY"]
        let push: [(String?, String, WritableKeyPath<PushConfiguration, String>)] = [
            (apnsURL, "COUNTERSIGN_APNS_URL", \.apnsProductionURL),
            (apnsSandboxURL, "COUNTERSIGN_APNS_SANDBOX_URL", \.apnsSandboxURL),
            (fcmURL, "COUNTERSIGN_FCM_URL", \.fcmURL),
            (fcmTokenURL, "COUNTERSIGN_FCM_TOKEN_URL", \.fcmTokenURL),
        ]
        for (flag, variable, path) in push {
            guard let text = setting(flag, variable) else { continue }
            guard let url = URL(string: text), url.scheme?.lowercased() == "https", url.host != nil else {
                throw ValidationError("\(variable.dropFirst(12).lowercased().replacingOccurrences(of: "_", with: "-")) \(text) must be an https URL")
            }
            configuration.push[keyPath: path] = text.hasSuffix("/") ? String(text.dropLast()) : text
        }
        configuration.push.trustedCAFile = setting(pushCAFile, "COUNTERSIGN_PUSH_CA_FILE")
        configuration.push.dispatch = !noPushDispatch && ProcessInfo.processInfo.environment["COUNTERSIGN_PUSH_DISPATCH"] != "false"

        return configuration
    }
}
