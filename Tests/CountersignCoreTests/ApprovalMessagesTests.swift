import CountersignCore
import Crypto
import Foundation
import Testing

/// The messages of the approval protocol: the details a device shows, their sealing to one
/// device and one request, the signed decision, and the push that announces a request.
@Suite struct ApprovalMessagesTests {
    static let details = TransactionDetails(
        requestID: "txn_01HZX3", tenant: "acme", user: .init(id: "usr_1", name: "ada"),
        client: .init(id: "cli_1", name: "Payroll"), bindingMessage: "W4SP-7Q", scope: ["openid", "payroll:read"],
        acrValues: nil, context: .init(ipAddress: "203.0.113.7", userAgent: "Firefox/140"),
        requestedAt: 1_800_000_000, expiresAt: 1_800_000_120, challenge: "q1bW5lQ0S3YxNWRoY2hhbGxlbmdlMzJieXRlcw")

    // MARK: TransactionDetails

    @Test func canonicalDetailsParseBackToTheSameDetails() throws {
        let bytes = try Self.details.canonicalData()
        #expect(try TransactionDetails(canonicalBytes: bytes) == Self.details)
    }

    @Test func theCanonicalFormHasSortedMembersWithoutWhitespace() throws {
        let text = String(decoding: try Self.details.canonicalData(), as: UTF8.self)
        #expect(text.hasPrefix(#"{"binding_message":"W4SP-7Q","challenge":"#))
        #expect(text.hasSuffix(#""user":{"id":"usr_1","name":"ada"},"v":1}"#))
        #expect(!text.contains("\n") && !text.contains(": "))
    }

    @Test func theDigestIsTheBase64URLSHA256OfTheBytes() throws {
        let bytes = try Self.details.canonicalData()
        #expect(TransactionDetails.digest(of: bytes) == Data(SHA256.hash(data: bytes)).base64URLEncodedString)
        #expect(TransactionDetails.digest(of: bytes).count == 43)
    }

    static func nonCanonical(_ defect: String) throws -> Data {
        let canonical = String(decoding: try details.canonicalData(), as: UTF8.self)
        return switch defect {
        case "pretty-printed": try JSONSerialization.data(
            withJSONObject: JSONSerialization.jsonObject(with: Data(canonical.utf8)), options: [.prettyPrinted, .sortedKeys])
        case "members out of order": Data(("{\"v\":1," + canonical.dropFirst().dropLast(#","v":1}"#.count) + "}").utf8)
        case "trailing newline": Data((canonical + "\n").utf8)
        case "escaped slash": Data(canonical.replacingOccurrences(of: "Firefox/140", with: #"Firefox\/140"#).utf8)
        default: Data(canonical.utf8)
        }
    }

    @Test(arguments: ["pretty-printed", "members out of order", "trailing newline", "escaped slash"])
    func nonCanonicalBytesAreRefused(_ defect: String) throws {
        let bytes = try Self.nonCanonical(defect)
        #expect(throws: ApprovalMessageError.malformed("the request details are not in canonical form")) {
            try TransactionDetails(canonicalBytes: bytes)
        }
    }

    @Test func duplicateMemberNamesAreRefused() throws {
        let canonical = String(decoding: try Self.details.canonicalData(), as: UTF8.self)
        let duplicated = canonical.replacingOccurrences(
            of: #""binding_message":"W4SP-7Q","#, with: #""binding_message":"W4SP-7Q","binding_message":"OTHER","#)
        #expect(throws: ApprovalMessageError.malformed("the request details are not a JSON object")) {
            try TransactionDetails(canonicalBytes: Data(duplicated.utf8))
        }
    }

    @Test(arguments: [#"["txn_01HZX3"]"#, #""txn_01HZX3""#, "", "{"])
    func bytesThatAreNotAJSONObjectAreRefused(_ text: String) {
        #expect(throws: ApprovalMessageError.malformed("the request details are not a JSON object")) {
            try TransactionDetails(canonicalBytes: Data(text.utf8))
        }
    }

    @Test func detailsWithoutAChallengeAreRefused() throws {
        guard case .object(var members) = try JSONValue(encoding: Self.details) else {
            Issue.record("the details do not encode as an object")
            return
        }
        members["challenge"] = nil
        #expect(throws: ApprovalMessageError.malformed("the request details lack a required member")) {
            try TransactionDetails(canonicalBytes: JSONValue.object(members).canonicalData)
        }
    }

    @Test(arguments: [0, 2] as [Int64])
    func anotherVersionIsRefused(_ version: Int64) throws {
        var details = Self.details
        details.version = version
        #expect(throws: ApprovalMessageError.unsupportedVersion(version)) {
            try TransactionDetails(canonicalBytes: details.canonicalData())
        }
    }

    // MARK: SealedDetails

    let deviceKey = P256.KeyAgreement.PrivateKey()

    func open(
        _ sealed: SealedDetails, deviceID: String = "dev_1", requestID: String = "txn_01HZX3"
    ) throws -> Data {
        let (encapsulatedKey, ciphertext) = try sealed.parts()
        var recipient = try HPKE.Recipient(
            privateKey: deviceKey, ciphersuite: HPKESuite.countersign, info: SealedDetails.info(deviceID: deviceID),
            encapsulatedKey: encapsulatedKey)
        return try recipient.open(ciphertext, authenticating: SealedDetails.additionalData(requestID: requestID))
    }

    func sealed() throws -> (plaintext: Data, sealed: SealedDetails) {
        let plaintext = try Self.details.canonicalData()
        return (plaintext, try SealedDetails.seal(plaintext, to: deviceKey.publicKey, deviceID: "dev_1", requestID: "txn_01HZX3"))
    }

    @Test func sealedDetailsOpenWithTheDeviceKeyToTheSameBytes() throws {
        let (plaintext, sealed) = try sealed()
        #expect(sealed.suite == HPKESuite.name)
        #expect(try open(sealed) == plaintext)
    }

    @Test func theInfoNamesTheProtocolAndTheDevice() {
        #expect(SealedDetails.info(deviceID: "dev_1") == Data("countersign/v1/details\u{0}dev_1".utf8))
        #expect(SealedDetails.additionalData(requestID: "txn_1") == Data("txn_1".utf8))
    }

    @Test func detailsSealedForAnotherDeviceDoNotOpen() throws {
        let (_, sealed) = try sealed()
        #expect(throws: (any Error).self) { try open(sealed, deviceID: "dev_2") }
    }

    @Test func detailsSealedForAnotherRequestDoNotOpen() throws {
        let (_, sealed) = try sealed()
        #expect(throws: (any Error).self) { try open(sealed, requestID: "txn_01HZX4") }
    }

    @Test(arguments: ["ciphertext", "encapsulated key"])
    func aFlippedBitIsDetected(_ part: String) throws {
        var (_, sealed) = try sealed()
        let (encapsulatedKey, ciphertext) = try sealed.parts()
        var bytes = part == "ciphertext" ? ciphertext : encapsulatedKey
        bytes[bytes.startIndex + 20] ^= 0x01
        if part == "ciphertext" {
            sealed.ciphertext = bytes.base64URLEncodedString
        } else {
            sealed.encapsulatedKey = bytes.base64URLEncodedString
        }
        #expect(throws: (any Error).self) { try open(sealed) }
    }

    @Test func anotherSuiteIsRefusedBeforeOpening() throws {
        var (_, sealed) = try sealed()
        sealed.suite = "DHKEM-X25519-HKDF-SHA256/HKDF-SHA256/ChaCha20Poly1305"
        #expect(throws: ApprovalMessageError.malformed("unsupported HPKE suite \(sealed.suite)")) { try sealed.parts() }
    }

    @Test func partsThatAreNotBase64URLAreRefused() throws {
        var (_, sealed) = try sealed()
        sealed.ciphertext = "not base64url!"
        #expect(throws: ApprovalMessageError.malformed("the sealed details are not base64url")) { try sealed.parts() }
    }

    // MARK: ApprovalResponse

    let signingKey = P256.Signing.PrivateKey()

    static let response = ApprovalResponse(
        requestID: "txn_01HZX3", decision: .approve, detailsDigest: "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU",
        challenge: details.challenge, factors: ["confirm"], issuedAt: 1_800_000_030)

    @Test(arguments: ApprovalResponse.Decision.allCases)
    func aSignedResponseVerifiesWithTheDeviceKey(_ decision: ApprovalResponse.Decision) throws {
        var response = Self.response
        response.decision = decision
        let jws = try response.sign(deviceID: "dev_1", signer: signingKey)
        let verified = try ApprovalResponse.verified(jws.serialized, key: signingKey.publicKey, deviceID: "dev_1")
        #expect(verified.response == response)
        #expect(verified.jws.type == ApprovalResponse.type)
        #expect(verified.jws.keyID == "dev_1")
    }

    @Test func theResponseClaimsAreTheProtocolNames() throws {
        let jws = try Self.response.sign(deviceID: "dev_1", signer: signingKey)
        let claims = try jws.payloadJSON()
        #expect(claims["request_id"]?.stringValue == "txn_01HZX3")
        #expect(claims["decision"]?.stringValue == "approve")
        #expect(claims["details_sha256"]?.stringValue == Self.response.detailsDigest)
        #expect(claims["iat"]?.integerValue == 1_800_000_030)
    }

    @Test func aResponseSignedByAnotherKeyIsRefused() throws {
        let jws = try Self.response.sign(deviceID: "dev_1", signer: P256.Signing.PrivateKey())
        #expect(throws: ApprovalMessageError.malformed("the response is not signed by this device's key")) {
            try ApprovalResponse.verified(jws.serialized, key: signingKey.publicKey, deviceID: "dev_1")
        }
    }

    @Test func aResponseNamingAnotherDeviceIsRefused() throws {
        let jws = try Self.response.sign(deviceID: "dev_2", signer: signingKey)
        #expect(throws: ApprovalMessageError.malformed("the response's kid is not this device")) {
            try ApprovalResponse.verified(jws.serialized, key: signingKey.publicKey, deviceID: "dev_1")
        }
    }

    @Test(arguments: ["JWT", "countersign-request+jwt"])
    func aJWSOfAnotherTypeIsRefused(_ type: String) throws {
        let jws = try CompactJWS.sign(
            header: ["typ": .string(type), "kid": .string("dev_1")],
            payload: JSONValue(encoding: Self.response).canonicalData, signer: signingKey)
        #expect(throws: ApprovalMessageError.malformed("the response's typ must be \(ApprovalResponse.type)")) {
            try ApprovalResponse.verified(jws.serialized, key: signingKey.publicKey, deviceID: "dev_1")
        }
    }

    @Test func aResponseWithoutADecisionIsRefused() throws {
        let jws = try CompactJWS.sign(
            header: ["typ": .string(ApprovalResponse.type), "kid": .string("dev_1")],
            payload: JSONValue.object(["request_id": .string("txn_01HZX3")]).canonicalData, signer: signingKey)
        #expect(throws: ApprovalMessageError.malformed("the response's payload lacks the claim decision")) {
            try ApprovalResponse.verified(jws.serialized, key: signingKey.publicKey, deviceID: "dev_1")
        }
    }

    // MARK: PushPayload

    static let payload = PushPayload(deviceID: "dev_1", requestID: "txn_01HZX3", expiresAt: 1_800_000_120)

    @Test func anAPNsPayloadCarriesTheDictionaryBesideAPS() {
        let userInfo: [AnyHashable: Any] = [
            "aps": ["alert": ["title": "Approve sign-in?"], "mutable-content": 1],
            "countersign": ["v": 1, "device_id": "dev_1", "request_id": "txn_01HZX3", "exp": 1_800_000_120] as [String: Any],
        ]
        #expect(PushPayload(userInfo: userInfo) == Self.payload)
    }

    @Test func anAPNsPayloadReadFromJSONIsUnderstood() throws {
        let apns = JSONValue.object(Self.payload.apnsMember.merging(["aps": .object(["content-available": .integer(1)])]) { $1 })
        let userInfo = try #require(try JSONSerialization.jsonObject(with: apns.canonicalData) as? [AnyHashable: Any])
        #expect(PushPayload(userInfo: userInfo) == Self.payload)
    }

    @Test func anFCMDataMessageCarriesTheJSONAsAString() {
        let userInfo: [AnyHashable: Any] = Self.payload.fcmData.reduce(into: ["google.message_id": "0:1"]) { $0[$1.key] = $1.value }
        #expect(PushPayload(userInfo: userInfo) == Self.payload)
    }

    @Test func aClosedEventRoundTripsAndANewRequestLeavesEventOut() throws {
        let closed = PushPayload(deviceID: "dev_1", requestID: "txn_01HZX3", expiresAt: 1_800_000_120, event: .closed)
        #expect(closed.json["event"]?.stringValue == "closed")
        #expect(PushPayload(userInfo: closed.fcmData) == closed)
        #expect(PushPayload(jsonData: closed.json.canonicalData)?.event == .closed)
        #expect(Self.payload.json["event"] == nil, "version-1 payloads of a new request read as before")
        let decoded = try JSONDecoder().decode(PushPayload.self, from: try JSONEncoder().encode(Self.payload))
        #expect(decoded == Self.payload)
    }

    @Test func aNoticeCarriesItsNoticeAndNoRequest() throws {
        let notice = PushPayload(deviceID: "dev_1", noticeID: "ntc_01HZX3", expiresAt: 1_800_604_800)
        #expect(notice.json == .object([
            "v": .integer(1), "event": .string("notice"), "device_id": .string("dev_1"), "notice_id": .string("ntc_01HZX3"),
            "exp": .integer(1_800_604_800),
        ]))
        #expect(PushPayload(userInfo: notice.fcmData) == notice)
        let decoded = try JSONDecoder().decode(PushPayload.self, from: try JSONEncoder().encode(notice))
        #expect(decoded == notice)
        // A request's payload keeps its request whatever else it carries; a notice needs its notice.
        let request = PushPayload(
            jsonData: Data(#"{"v":1,"device_id":"dev_1","request_id":"txn_1","notice_id":"ntc_1","exp":1800000120}"#.utf8))
        #expect(request?.noticeID == nil && request?.json["request_id"]?.stringValue == "txn_1")
        #expect(PushPayload(jsonData: Data(#"{"v":1,"event":"notice","device_id":"dev_1","notice_id":"","exp":1}"#.utf8)) == nil)
        #expect(PushPayload(jsonData: Data(#"{"v":1,"event":"notice","device_id":"dev_1","request_id":"txn_1","exp":1}"#.utf8)) == nil)
    }

    @Test func anUnknownEventIsNotUnderstood() {
        let member = #"{"v":1,"event":"reshuffled","device_id":"dev_1","request_id":"txn_1","exp":1800000120}"#
        #expect(PushPayload(userInfo: ["countersign": member]) == nil)
    }

    @Test(arguments: [
        "another app's push", "not JSON", "version 2", "no device", "empty request id", "a number",
    ])
    func aPushThatIsNotCountersignsIsIgnored(_ kind: String) {
        let member: Any? = switch kind {
        case "not JSON": "{device_id: dev_1"
        case "version 2": #"{"v":2,"device_id":"dev_1","request_id":"txn_1","exp":1800000120}"#
        case "no device": #"{"v":1,"request_id":"txn_1","exp":1800000120}"#
        case "empty request id": #"{"v":1,"device_id":"dev_1","request_id":"","exp":1800000120}"#
        case "a number": 42
        default: nil
        }
        var userInfo: [AnyHashable: Any] = ["aps": ["alert": "You have mail"]]
        userInfo["countersign"] = member
        #expect(PushPayload(userInfo: userInfo) == nil)
    }
}
