import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a server could not be reached, in words: "connection refused", "the server closed the
/// connection". SwiftNIO's own text for a failed connection reads `connection reset (error set):
/// Connection refused) (errno: 111)`: the wrong verb and an unmatched parenthesis, so the errors
/// of a transport are described here instead of printed as they are.
package struct ConnectionFailure: Error, CustomStringConvertible {
    /// The server's URL, as the user gave it.
    package let server: String
    /// What went wrong, in a few lowercase words.
    package let reason: String

    package init(server: String, error: any Error) {
        self.server = server
        self.reason = Self.reason(error)
    }

    package var description: String { "cannot reach \(server): \(reason)" }

    static func reason(_ error: any Error) -> String {
        switch error {
        case let error as IOError:
            return reason(errno: error.errnoCode)
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return reason(first.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "the host name \(error.host) cannot be resolved" }
            return "no connection to \(error.host) port \(error.port)"
        case let error as HTTPClientError:
            switch error {
            case .connectTimeout: return "no connection within the time allowed"
            case .remoteConnectionClosed: return "the server closed the connection before answering"
            case .deadlineExceeded, .readTimeout: return "no answer within the time allowed"
            case .tlsHandshakeTimeout: return "the TLS handshake took too long"
            default: return "\(error)"
            }
        case ChannelError.connectTimeout:
            return "no connection within the time allowed"
        case let error as URLError:
            switch error.code {
            case .cannotConnectToHost: return "no connection to the server"
            case .cannotFindHost, .dnsLookupFailed: return "the host name cannot be resolved"
            case .timedOut: return "no answer within the time allowed"
            case .networkConnectionLost: return "the connection was lost"
            case .notConnectedToInternet: return "this machine is not connected to a network"
            default: return error.localizedDescription
            }
        default:
            return "\(error)"
        }
    }

    static func reason(errno code: CInt) -> String {
        switch code {
        case ECONNREFUSED: return "connection refused"
        case ECONNRESET: return "connection reset by the server"
        case ETIMEDOUT: return "the connection timed out"
        case EHOSTUNREACH: return "no route to the host"
        case ENETUNREACH: return "the network is unreachable"
        case EPIPE: return "the server closed the connection"
        default: return strerror(code).map { String(cString: $0).lowercased() } ?? "error \(code)"
        }
    }
}
