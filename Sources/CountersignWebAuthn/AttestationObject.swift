import CountersignCBOR

/// The attestation object (WebAuthn Level 3 §6.5.4): a CBOR map of `fmt` (text), `attStmt`
/// (a map whose shape the format defines) and `authData` (bytes).
public struct AttestationObject: Sendable, Equatable {
    public let format: String
    public let statement: CBORMap
    public let authenticatorData: AuthenticatorData

    public init(parsing bytes: [UInt8]) throws(WebAuthnFormatError) {
        let value: CBORValue
        do {
            value = try CBORDecoder().decode(bytes)
        } catch {
            throw .cbor(error, part: "attestationObject")
        }
        guard let map = value.map else { throw .attestationObjectMember("attestationObject") }
        guard let format = map[text: "fmt"]?.text else { throw .attestationObjectMember("fmt") }
        guard let statement = map[text: "attStmt"]?.map else { throw .attestationObjectMember("attStmt") }
        guard let authData = map[text: "authData"]?.bytes, !authData.isEmpty else { throw .attestationObjectMember("authData") }
        self.format = format
        self.statement = statement
        authenticatorData = try AuthenticatorData(parsing: authData)
    }

    public init(format: String, statement: CBORMap, authenticatorData: AuthenticatorData) {
        self.format = format
        self.statement = statement
        self.authenticatorData = authenticatorData
    }

    /// The object in CTAP2 canonical CBOR (`fmt`, `attStmt`, `authData`).
    public var encoded: [UInt8] {
        CBOREncoder.encode(.map(CBORMap([
            .init(key: .text("fmt"), value: .text(format)),
            .init(key: .text("attStmt"), value: .map(statement)),
            .init(key: .text("authData"), value: .bytes(authenticatorData.bytes)),
        ])))
    }
}
