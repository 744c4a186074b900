import CountersignCore
import Crypto
import Foundation
import Testing

/// The protocol's one HPKE suite: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM.
@Suite struct HPKESuiteTests {
    let recipientKey = P256.KeyAgreement.PrivateKey()
    let info = Data("countersign request details".utf8)
    let aad = Data("req_123".utf8)
    let message = Data(#"{"binding_message":"W4SP"}"#.utf8)

    func sealed() throws -> (encapsulatedKey: Data, ciphertext: Data) {
        var sender = try HPKE.Sender(recipientKey: recipientKey.publicKey, ciphersuite: HPKESuite.countersign, info: info)
        return (sender.encapsulatedKey, try sender.seal(message, authenticating: aad))
    }

    @Test func theSuiteIsP256WithHKDFSHA256AndAES256GCM() {
        #expect(HPKESuite.countersign.kem == .P256_HKDF_SHA256)
        #expect(HPKESuite.countersign.kdf == .HKDF_SHA256)
        #expect(HPKESuite.countersign.aead == .AES_GCM_256)
        #expect(HPKESuite.name == "DHKEM-P256-HKDF-SHA256/HKDF-SHA256/AES-256-GCM")
    }

    @Test func aSealedMessageOpensWithTheRecipientKey() throws {
        let (encapsulatedKey, ciphertext) = try sealed()
        #expect(encapsulatedKey.count == 65)
        var recipient = try HPKE.Recipient(
            privateKey: recipientKey, ciphersuite: HPKESuite.countersign, info: info, encapsulatedKey: encapsulatedKey)
        #expect(try recipient.open(ciphertext, authenticating: aad) == message)
    }

    @Test func aMessageSealedToTheJWKOfTheKeyOpens() throws {
        let jwk = ECPublicJWK(recipientKey.publicKey)
        var sender = try HPKE.Sender(recipientKey: try jwk.agreementKey(), ciphersuite: HPKESuite.countersign, info: info)
        let ciphertext = try sender.seal(message, authenticating: aad)
        var recipient = try HPKE.Recipient(
            privateKey: recipientKey, ciphersuite: HPKESuite.countersign, info: info, encapsulatedKey: sender.encapsulatedKey)
        #expect(try recipient.open(ciphertext, authenticating: aad) == message)
    }

    @Test func aWrongInfoFailsToOpen() throws {
        let (encapsulatedKey, ciphertext) = try sealed()
        var recipient = try HPKE.Recipient(
            privateKey: recipientKey, ciphersuite: HPKESuite.countersign, info: Data("other".utf8), encapsulatedKey: encapsulatedKey)
        #expect(throws: (any Error).self) { try recipient.open(ciphertext, authenticating: aad) }
    }

    @Test func aWrongAssociatedDataFailsToOpen() throws {
        let (encapsulatedKey, ciphertext) = try sealed()
        var recipient = try HPKE.Recipient(
            privateKey: recipientKey, ciphersuite: HPKESuite.countersign, info: info, encapsulatedKey: encapsulatedKey)
        #expect(throws: (any Error).self) { try recipient.open(ciphertext, authenticating: Data("req_456".utf8)) }
    }

    @Test func anotherRecipientKeyFailsToOpen() throws {
        let (encapsulatedKey, ciphertext) = try sealed()
        var recipient = try HPKE.Recipient(
            privateKey: P256.KeyAgreement.PrivateKey(), ciphersuite: HPKESuite.countersign, info: info,
            encapsulatedKey: encapsulatedKey)
        #expect(throws: (any Error).self) { try recipient.open(ciphertext, authenticating: aad) }
    }

    @Test func aTamperedCiphertextFailsToOpen() throws {
        var (encapsulatedKey, ciphertext) = try sealed()
        ciphertext[ciphertext.startIndex] ^= 0x80
        var recipient = try HPKE.Recipient(
            privateKey: recipientKey, ciphersuite: HPKESuite.countersign, info: info, encapsulatedKey: encapsulatedKey)
        #expect(throws: (any Error).self) { try recipient.open(ciphertext, authenticating: aad) }
    }

    @Test func anotherSuiteFailsToOpen() throws {
        let (encapsulatedKey, ciphertext) = try sealed()
        let aes128 = HPKE.Ciphersuite(kem: .P256_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_128)
        var recipient = try HPKE.Recipient(
            privateKey: recipientKey, ciphersuite: aes128, info: info, encapsulatedKey: encapsulatedKey)
        #expect(throws: (any Error).self) { try recipient.open(ciphertext, authenticating: aad) }
    }

    // MARK: Published vectors, open direction

    /// One base-mode vector: the recipient's key, the sender's `enc`, and encryptions in sequence.
    struct Vector {
        var suite: HPKE.Ciphersuite
        var skRm: String
        var pkRm: String
        var enc: String
        var encryptions: [(aad: String, ct: String)]
    }

    static let vectorInfo = Data(hex: "4f6465206f6e2061204772656369616e2055726e") // "Ode on a Grecian Urn"
    static let vectorPlaintext = Data(hex: "4265617574792069732074727574682c20747275746820626561757479") // "Beauty is truth, truth beauty"

    /// RFC 9180 Appendix A.3.1: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM, base mode.
    static let rfc9180A31 = Vector(
        suite: HPKE.Ciphersuite(kem: .P256_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_128),
        skRm: "f3ce7fdae57e1a310d87f1ebbde6f328be0a99cdbcadf4d6589cf29de4b8ffd2",
        pkRm: "04fe8c19ce0905191ebc298a9245792531f26f0cece2460639e8bc39cb7f706a826a779b4cf969b8a0e539c7f62fb3d30ad6aa8f80e30f1d128aafd68a2ce72ea0",
        enc: "04a92719c6195d5085104f469a8b9814d5838ff72b60501e2c4466e5e67b325ac98536d7b61a1af4b78e5b7f951c0900be863c403ce65c9bfcb9382657222d18c4",
        encryptions: [
            ("436f756e742d30", "5ad590bb8baa577f8619db35a36311226a896e7342a6d836d8b7bcd2f20b6c7f9076ac232e3ab2523f39513434"),
            ("436f756e742d31", "fa6f037b47fc21826b610172ca9637e82d6e5801eb31cbd3748271affd4ecb06646e0329cbdf3c3cd655b28e82"),
        ])

    /// The CFRG test-vectors.json published with RFC 9180, mode 0 / KEM 0x0010 / KDF 0x0001 /
    /// AEAD 0x0002: exactly `HPKESuite.countersign`.
    static let cfrgCountersignSuite = Vector(
        suite: HPKESuite.countersign,
        skRm: "317f915db7bc629c48fe765587897e01e282d3e8445f79f27f65d031a88082b2",
        pkRm: "04abc7e49a4c6b3566d77d0304addc6ed0e98512ffccf505e6a8e3eb25c685136f853148544876de76c0f2ef99cdc3a05ccf5ded7860c7c021238f9e2073d2356c",
        enc: "04c06b4f6bebc7bb495cb797ab753f911aff80aefb86fd8b6fcc35525f3ab5f03e0b21bd31a86c6048af3cb2d98e0d3bf01da5cc4c39ff5370d331a4f1f7d5a4e0",
        encryptions: [
            ("436f756e742d30", "58c61a45059d0c5704560e9d88b564a8b63f1364b8d1fcb3c4c6ddc1d291742465e902cd216f8908da49f8f96f"),
            ("436f756e742d31", "b4e7c90d1dd62cb563694956eb517ab55d5e7d1f6366a0066c04ababaa444dbaf60a30d7bb7d3e91b969762dee"),
        ])

    func open(_ vector: Vector) throws {
        let privateKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: Data(hex: vector.skRm))
        #expect(privateKey.publicKey.x963Representation == Data(hex: vector.pkRm))
        var recipient = try HPKE.Recipient(
            privateKey: privateKey, ciphersuite: vector.suite, info: Self.vectorInfo, encapsulatedKey: Data(hex: vector.enc))
        for encryption in vector.encryptions {
            #expect(try recipient.open(Data(hex: encryption.ct), authenticating: Data(hex: encryption.aad)) == Self.vectorPlaintext)
        }
    }

    @Test func rfc9180AppendixA31OpensToThePublishedPlaintext() throws {
        try open(Self.rfc9180A31)
    }

    @Test func theCFRGVectorForTheCountersignSuiteOpensToThePublishedPlaintext() throws {
        try open(Self.cfrgCountersignSuite)
    }

    @Test func thePublishedVectorDoesNotOpenWithAnotherInfo() throws {
        let vector = Self.cfrgCountersignSuite
        var recipient = try HPKE.Recipient(
            privateKey: try P256.KeyAgreement.PrivateKey(rawRepresentation: Data(hex: vector.skRm)),
            ciphersuite: vector.suite, info: Data("Ode on a Grecian Urn!".utf8), encapsulatedKey: Data(hex: vector.enc))
        #expect(throws: (any Error).self) {
            try recipient.open(Data(hex: vector.encryptions[0].ct), authenticating: Data(hex: vector.encryptions[0].aad))
        }
    }
}
