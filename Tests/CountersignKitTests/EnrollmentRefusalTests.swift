import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignKit

/// Enrollments that must fail before or without a server, leaving no key material behind.
@Suite struct EnrollmentRefusalTests {
    static let fingerprint = ECPublicJWK(P256.Signing.PrivateKey().publicKey).thumbprint

    static func uri(server: String, ticket: String = "cst_abc", fp: String = fingerprint) -> String {
        EnrollmentURI(server: URL(string: server)!, ticket: ticket, serverKeyThumbprint: fp).description
    }

    static let malformedURIs: [String] = [
        "",
        "not a uri at all",
        "https://auth.example.com/enroll?v=1&server=https%3A%2F%2Fauth.example.com&ticket=t&fp=\(fingerprint)",
        "countersign://pair?v=1&server=https%3A%2F%2Fauth.example.com&ticket=t&fp=\(fingerprint)",
        "countersign://enroll?server=https%3A%2F%2Fauth.example.com&ticket=t&fp=\(fingerprint)",
        "countersign://enroll?v=2&server=https%3A%2F%2Fauth.example.com&ticket=t&fp=\(fingerprint)",
        "countersign://enroll?v=1&ticket=t&fp=\(fingerprint)",
        "countersign://enroll?v=1&server=ftp%3A%2F%2Fauth.example.com&ticket=t&fp=\(fingerprint)",
        "countersign://enroll?v=1&server=https%3A%2F%2Fauth.example.com&fp=\(fingerprint)",
        "countersign://enroll?v=1&server=https%3A%2F%2Fauth.example.com&ticket=t",
        "countersign://enroll?v=1&server=https%3A%2F%2Fauth.example.com&ticket=t&fp=short",
        "countersign://enroll?v=1&v=1&server=https%3A%2F%2Fauth.example.com&ticket=t&fp=\(fingerprint)",
        "countersign://enroll?v=1&server=https%3A%2F%2Fauth.example.com%3Ftenant%3Dacme&ticket=t&fp=\(fingerprint)",
    ]

    @Test(arguments: malformedURIs)
    func aMalformedURIIsRefusedAndLeavesNoKeys(_ uri: String) async throws {
        try await withTemporaryRoot { root in
            let authenticator = CountersignAuthenticator(keyStore: FileKeyStore(root: root))
            let error = await #expect(throws: CountersignError.self) {
                try await authenticator.enroll(uri: uri, deviceName: "Ada's laptop", platform: .linux)
            }
            guard case .invalidEnrollmentURI = error else {
                Issue.record("expected invalidEnrollmentURI, got \(String(describing: error))")
                return
            }
            #expect(contents(of: root).isEmpty)
        }
    }

    @Test(arguments: ["", "   ", "tab\there", String(repeating: "x", count: DeviceName.maximumLength + 1)])
    func anInvalidDeviceNameIsRefusedAndLeavesNoKeys(_ name: String) async throws {
        try await withTemporaryRoot { root in
            let authenticator = CountersignAuthenticator(keyStore: FileKeyStore(root: root))
            await #expect(throws: CountersignError.invalidDeviceName) {
                try await authenticator.enroll(
                    uri: Self.uri(server: "https://auth.example.com"), deviceName: name, platform: .linux)
            }
            #expect(contents(of: root).isEmpty)
        }
    }

    @Test func anUnreachableServerFailsTheEnrollmentAndItsKeysAreDeleted() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let authenticator = CountersignAuthenticator(keyStore: store)
            // Nothing listens on port 1 (it needs privileges to bind), so the connection is refused.
            await #expect(throws: CountersignError.serverNotReachable) {
                try await authenticator.enroll(
                    uri: Self.uri(server: "http://127.0.0.1:1"), deviceName: "Ada's laptop", platform: .linux)
            }
            let remaining = try await authenticator.enrollments()
            #expect(remaining.isEmpty)
            #expect(contents(of: root).isEmpty)
        }
    }
}
