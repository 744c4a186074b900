import CountersignCBOR
import CountersignWebAuthn
import Crypto
import Foundation
import SwiftASN1
import X509
@testable import CountersignServer

/// The registrations the attestation tests verify: the W3C WebAuthn Level 3 test vectors
/// (`Fixtures/webauthn/w3c-test-vectors.json`, taken from the specification's "Test Vectors"
/// appendix) and statements real authenticators produced (`device-registrations.json`, from
/// py_webauthn's tests). Byte strings are hex in both.
enum WebAuthnAttestationFixtures {
    struct W3CVectors: Decodable {
        struct Case: Decodable {
            struct Registration: Decodable {
                var challenge: String
                var clientDataJSON: String
                var attestationObject: String
            }
            var name: String
            var section: String
            var registration: Registration
        }
        var rp_id: String
        var attestation_ca_cert: String
        var cases: [Case]
    }

    struct DeviceRegistrations: Decodable {
        struct Registration: Decodable {
            var name: String
            var format: String
            var rp_id: String
            var valid_at: String
            var credential_id: String
            var clientDataJSON: String
            var attestationObject: String
        }
        var registrations: [Registration]
    }

    /// A registration's attestation object, ready for a format to verify.
    struct Registration: Sendable {
        var object: AttestationObject
        var clientDataHash: [UInt8]
        /// A time at which every certificate of the statement is valid.
        var date: Date

        var statement: CBORMap { object.statement }
        var authenticatorData: AuthenticatorData { object.authenticatorData }

        func verify(
            _ format: any AttestationStatementFormat, statement: CBORMap? = nil, authenticatorData: AuthenticatorData? = nil,
            clientDataHash: [UInt8]? = nil, at date: Date? = nil
        ) throws(AttestationFailure) -> VerifiedAttestation {
            try format.verify(
                statement: statement ?? self.statement, authenticatorData: authenticatorData ?? self.authenticatorData,
                clientDataHash: clientDataHash ?? self.clientDataHash, at: date ?? self.date)
        }
    }

    struct FixtureError: Error, CustomStringConvertible {
        var description: String
    }

    static let folder = BuildProducts.serverTests.appending(path: "Fixtures/webauthn")

    /// The W3C vectors' certificates are valid from 2024 to 3024.
    static let w3cDate = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01

    static func w3c() throws -> W3CVectors { try decode("w3c-test-vectors.json") }
    static func devices() throws -> DeviceRegistrations { try decode("device-registrations.json") }

    static func w3cCase(_ name: String) throws -> W3CVectors.Case {
        guard let found = try w3c().cases.first(where: { $0.name == name }) else { throw FixtureError(description: "no W3C vector \(name)") }
        return found
    }

    static func w3cRegistration(_ name: String) throws -> Registration {
        let registration = try w3cCase(name).registration
        return Registration(
            object: try AttestationObject(parsing: try hex(registration.attestationObject)),
            clientDataHash: Array(SHA256.hash(data: try hex(registration.clientDataJSON))), date: w3cDate)
    }

    static func w3cAttestationCA() throws -> Certificate {
        try Certificate(derEncoded: try hex(try w3c().attestation_ca_cert))
    }

    static func device(_ name: String) throws -> DeviceRegistrations.Registration {
        guard let found = try devices().registrations.first(where: { $0.name == name }) else {
            throw FixtureError(description: "no device registration \(name)")
        }
        return found
    }

    static func deviceRegistration(_ name: String) throws -> Registration {
        let registration = try device(name)
        guard let date = ISO8601DateFormatter().date(from: registration.valid_at) else {
            throw FixtureError(description: "valid_at of \(name) is not an ISO 8601 time")
        }
        return Registration(
            object: try AttestationObject(parsing: try hex(registration.attestationObject)),
            clientDataHash: Array(SHA256.hash(data: try hex(registration.clientDataJSON))), date: date)
    }

    static func hex(_ string: String) throws -> [UInt8] {
        try Hex.bytes(string)
    }

    private static func decode<T: Decodable>(_ file: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(contentsOf: folder.appending(path: file)))
    }
}

extension CBORMap {
    /// The statement's `x5c` certificates, or none.
    var certificates: [[UInt8]] {
        (self[text: "x5c"]?.array ?? []).compactMap { $0.bytes }
    }

    /// This map with `member` set to `value`, or removed when `value` is nil.
    func setting(_ member: String, to value: CBORValue?) -> CBORMap {
        var entries = entries.filter { $0.key != .text(member) }
        if let value { entries.append(.init(key: .text(member), value: value)) }
        return CBORMap(entries)
    }
}

extension Array where Element == UInt8 {
    /// A copy with the byte at `index` (from the end when negative) XORed with `mask`.
    func flipping(at index: Int, mask: UInt8 = 0x01) -> [UInt8] {
        var copy = self
        copy[index >= 0 ? index : count + index] ^= mask
        return copy
    }
}

extension AuthenticatorData {
    /// The same authenticator data with another AAGUID; the credential and flags stay.
    func replacingAAGUID(with aaguid: [UInt8]) throws -> AuthenticatorData {
        var bytes = bytes
        bytes.replaceSubrange(37..<53, with: aaguid)
        return try AuthenticatorData(parsing: bytes)
    }
}
