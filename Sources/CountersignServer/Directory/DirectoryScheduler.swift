import Foundation
import Logging
import ServiceLifecycle

/// Runs the scheduled syncs: every `pollInterval` it asks which directories are due and syncs
/// each whose lease it wins, so that of several nodes exactly one syncs a directory at a time.
/// A sync that fails is recorded on the directory (`GET …/directory/sync`) and in the audit log,
/// and tried again at the next interval.
struct DirectoryScheduler: Service {
    let database: any Database
    let directories: any DirectoryRepository
    let sync: DirectorySync
    let logger: Logger
    let now: @Sendable () -> Date
    var pollInterval: Duration = .seconds(30)

    func run() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            await runOnce()
            // Ends at once when the server shuts down.
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: pollInterval) }
        }
    }

    /// Syncs every directory that is due and not being synced; returns how many it synced.
    @discardableResult
    func runOnce() async -> Int {
        let date = now()
        let due: [String]
        do {
            due = try await directories.due(now: date, limit: 10, on: database)
        } catch {
            logger.warning("directory schedule could not be read", metadata: ["error": "\(error)"])
            return 0
        }
        var synced = 0
        for tenantID in due {
            do {
                guard try await directories.acquireLease(
                    tenantID: tenantID, until: date.addingTimeInterval(DirectorySync.lease), now: date, due: true,
                    on: database) else { continue }
                let summary = try await sync.run(tenantID: tenantID, dryRun: false, actor: DirectorySync.actor, leased: true)
                synced += 1
                logger.info("directory synced", metadata: [
                    "tenant": "\(tenantID)", "created": "\(summary.usersCreated.count)",
                    "disabled": "\(summary.usersDisabled.count)",
                ])
            } catch {
                logger.warning("directory sync failed", metadata: ["tenant": "\(tenantID)", "error": "\(error)"])
            }
        }
        return synced
    }
}
