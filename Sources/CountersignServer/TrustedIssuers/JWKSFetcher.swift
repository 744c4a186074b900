import AsyncHTTPClient
import CountersignCore
import Foundation
import NIOCore
import NIOSSL

/// Where a trusted issuer's keys come from when it publishes them at a `jwks_uri`: the network
/// on a server (`HTTPJWKSFetcher`), anything else in a test of the cache.
protocol JWKSFetcher: Sendable {
    func fetch(_ uri: String) async throws(JWKSFetchError) -> ClientJWKS
}

/// Fetches a JSON Web Key Set over HTTP(S) and keeps the keys Countersign can verify with.
///
/// Each fetch has a client of its own, shut down when it ends: an issuer's keys are fetched at
/// most every few minutes, so a pool would hold idle connections to identity providers for
/// nothing, and a client that outlives the server must never be left behind. Redirects are not
/// followed (the administrator registers the final URL, and no answer can send the server
/// elsewhere), the whole exchange must end within `timeout`, and the body is read up to
/// `maximumSize` bytes.
///
/// A published set usually holds more than signing keys: encryption keys (`use` `enc`), other
/// algorithms, curves Countersign does not take. Those are left out rather than refusing the set;
/// the keys kept are checked exactly as inline ones are (`ClientJWK`), and a set that still holds
/// a private member is refused whole: its publisher has exposed a key.
struct HTTPJWKSFetcher: JWKSFetcher {
    static let maximumSize = 64 * 1024
    var timeout: Duration = .seconds(5)

    func fetch(_ uri: String) async throws(JWKSFetchError) -> ClientJWKS {
        let body: Data
        do {
            body = try await download(uri)
        } catch let error as JWKSFetchError {
            throw error
        } catch let error as HTTPClientError
            where [.deadlineExceeded, .connectTimeout, .readTimeout, .tlsHandshakeTimeout].contains(error) {
            throw .timedOut(timeout)
        } catch {
            throw .unreachable(String(describing: error))
        }
        guard case .object(let set)? = try? JSONValue(parsing: body), case .array(let members)? = set["keys"] else {
            throw .notAKeySet
        }
        var usable: [JSONValue] = []
        for (index, member) in members.enumerated() {
            do {
                let key = try ClientJWK(validating: member, position: index + 1)
                if !usable.contains(where: { $0["kid"]?.stringValue == key.kid }) { usable.append(key.jsonValue) }
            } catch .privateKey(let kid, let member) {
                throw .keySet(.privateKey(kid, member: member))
            } catch {
                continue
            }
        }
        guard !usable.isEmpty else { throw .noUsableKey }
        do { return try ClientJWKS(validating: .object(["keys": .array(usable)])) } catch { throw .keySet(error) }
    }

    private func download(_ uri: String) async throws -> Data {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        configuration.httpVersion = .http1Only
        var request = HTTPClientRequest(url: uri)
        request.headers.add(name: "Accept", value: "application/jwk-set+json, application/json")
        request.headers.add(name: "User-Agent", value: "Countersign/1")
        let (timeout, exchange) = (timeout, request)
        return try await HTTPClient.withHTTPClient(configuration: configuration) { client in
            // AsyncHTTPClient's deadline stops at the answer's head; the race bounds the body too.
            try await withThrowingTaskGroup(of: Data.self) { group in
                group.addTask {
                    let response = try await client.execute(exchange, timeout: .seconds(timeout.components.seconds))
                    guard response.status == .ok else { throw JWKSFetchError.status(Int(response.status.code)) }
                    do {
                        return Data(try await response.body.collect(upTo: Self.maximumSize).readableBytesView)
                    } catch is NIOTooManyBytesError {
                        throw JWKSFetchError.tooLarge
                    }
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw JWKSFetchError.timedOut(timeout)
                }
                defer { group.cancelAll() }
                guard let body = try await group.next() else { throw JWKSFetchError.timedOut(timeout) }
                return body
            }
        }
    }
}

/// Why an issuer's keys could not be had. The descriptions go to the log only (the token's
/// holder is told that the keys could not be fetched) and never name the URL, which may carry a
/// credential of the issuer's.
enum JWKSFetchError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreachable(String)
    case timedOut(Duration)
    case status(Int)
    case tooLarge
    case notAKeySet
    case noUsableKey
    case keySet(ClientJWKSError)

    var description: String {
        switch self {
        case .unreachable(let why): "the jwks_uri could not be reached: \(why)"
        case .timedOut(let timeout): "no complete answer within \(timeout)"
        case .status(let status): "the jwks_uri answered HTTP \(status)"
        case .tooLarge: "the answer is larger than \(HTTPJWKSFetcher.maximumSize) bytes"
        case .notAKeySet: "the answer is not a JSON Web Key Set (an object with a keys array)"
        case .noUsableKey: "the set holds no ES256 (P-256) or RS256 signing key with a kid"
        case .keySet(let error): "the key set \(error.description)"
        }
    }
}
