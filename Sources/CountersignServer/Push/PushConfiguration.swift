import Foundation
import NIOCore
import NIOSSL

/// Where the push services are and how the outbox is worked. The base URLs are Apple's and
/// Google's; tests and staging point them at local endpoints.
public struct PushConfiguration: Sendable {
    public var apnsProductionURL = "https://api.push.apple.com"
    public var apnsSandboxURL = "https://api.sandbox.push.apple.com"
    public var fcmURL = "https://fcm.googleapis.com"
    public var fcmTokenURL = "https://oauth2.googleapis.com/token"
    /// Whether this node sends the notifications in the outbox (a node may serve HTTP only).
    public var dispatch = true
    /// A PEM file of CA certificates to trust for the push services instead of the system's.
    public var trustedCAFile: String?
    /// Attempts per notification before it is recorded as failed.
    public var maximumAttempts = 8
    /// Rows claimed at once by a dispatch worker.
    public var batchSize = 512
    /// HTTP/2 connections per credential (each on its own event loop; at most one per loop).
    public var connectionsPerCredential = System.coreCount
    /// Dispatch workers per node, each claiming and sending its own batches.
    public var workers = 4
    /// How often an idle dispatcher looks for work queued by other nodes or due for a retry.
    public var pollInterval: Duration = .seconds(1)
    /// How long a claimed row is leased: a node that dies mid-send leaves it to others after this.
    public var lease: TimeInterval = 120
    /// The first retry delay; each later one doubles, up to `maximumRetryDelay`.
    public var retryDelay: TimeInterval = 2
    public var maximumRetryDelay: TimeInterval = 60

    public init() {}

    /// Refuses to start with a CA file that cannot be read: every push would fail later.
    func checkTrustedCAFile() throws {
        guard let file = trustedCAFile else { return }
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(file)
        } catch {
            throw PushConfigurationError.unreadableCAFile(file)
        }
        guard !certificates.isEmpty else { throw PushConfigurationError.unreadableCAFile(file) }
    }

    /// The delay before attempt `attempts + 1`, or the provider's `Retry-After` if longer.
    func retryDelay(afterAttempts attempts: Int, providerSaid: TimeInterval?) -> TimeInterval {
        let backoff = min(maximumRetryDelay, retryDelay * pow(2, Double(max(0, attempts - 1))))
        return max(backoff, min(providerSaid ?? 0, 3600))
    }
}

public enum PushConfigurationError: Error, CustomStringConvertible {
    case unreadableCAFile(String)

    public var description: String {
        switch self {
        case .unreadableCAFile(let file): "the push CA file \(file) holds no PEM certificate that can be read"
        }
    }
}
