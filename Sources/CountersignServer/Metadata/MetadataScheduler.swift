import Foundation
import Logging
import ServiceLifecycle

/// Reads the FIDO metadata BLOB when it is due (`AuthenticatorMetadataService.isDue`): at start,
/// then daily, sooner once the loaded BLOB's `nextUpdate` has passed, hourly after a failure.
/// Of several nodes, the one that wins the lease reads it; every node sees the result.
struct MetadataScheduler: Service {
    let metadata: AuthenticatorMetadataService
    let logger: Logger
    var pollInterval: Duration = .seconds(60)

    /// Added to the server's services only with a metadata source.
    func run() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            await runOnce()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: pollInterval) }
        }
    }

    /// Loads if due; the outcome, or nil when nothing was due or the load failed (recorded).
    @discardableResult
    func runOnce() async -> MetadataLoadOutcome? {
        do {
            guard metadata.isDue(try await metadata.state(), at: metadata.now()) else { return nil }
            return try await metadata.load()
        } catch {
            logger.debug("FIDO metadata schedule", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
