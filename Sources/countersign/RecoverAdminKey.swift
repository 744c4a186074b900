import ArgumentParser
import CountersignServer
import Foundation
import Logging

/// Issues a new system admin key straight into the database, for an operator who has lost every
/// key. Whoever can run this already holds the database and the master key, so it grants
/// nothing they could not take; it is recorded in the audit log as `recovery`.
struct RecoverAdminKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover-admin-key",
        abstract: "Issue a new system admin key with every right, using the server's database and master key directly.")

    @OptionGroup var options: ServerOptions

    @Option(help: "A name for the key.") var name = "recovery"

    func validate() throws {
        do { _ = try AdminFields.name(name) } catch {
            throw ValidationError("--name must be 1 to 100 characters without control or format characters")
        }
    }

    func run() async throws {
        let configuration = try options.configuration()
        var logger = Logger(label: "countersign")
        logger.logLevel = try options.logLevelValue()
        let server = try await CountersignServer.make(configuration: configuration, logger: logger)
        let secret: String
        if let bootstrap = server.bootstrapAdminKey {
            secret = bootstrap
        } else {
            let issued = try AdminFields.name(name)
            secret = try await server.database.transaction { executor in
                try await server.adminAuthenticator.issue(
                    tenantID: nil, name: issued, rights: AdminRight.allCases, createdBy: "recovery",
                    at: server.configuration.now(), on: executor
                ).secret
            }
        }
        await server.database.close()
        // Printed, never logged.
        FileHandle.standardOutput.write(Data("""
            A system admin API key with every right. It is shown only this once.
            export COUNTERSIGN_ADMIN_KEY='\(secret)'

            """.utf8))
    }
}
