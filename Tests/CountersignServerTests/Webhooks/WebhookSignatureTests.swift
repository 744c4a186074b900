import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

@Suite("Webhook signatures: what a receiver accepts and refuses")
struct WebhookSignatureTests {
    static let secret = "q3VdL0dXl6mYH2cNw8f1oQ4s7bZpK9tRj5uAeCgTiMx"
    static let body = Data(#"{"event":"approval.not_requested","id":"whd_01kjpq3m7z0r5w8y6t4v2s1x0a"}"#.utf8)
    static let signedAt = Date(timeIntervalSince1970: 1_772_442_000.75)

    @Test("the header is t=<unix seconds>,v1=<lower-case hex HMAC-SHA256 of \"<t>.<body>\">, keyed with the secret as shown")
    func headerFollowsTheDocumentedScheme() {
        var message = Data("1772442000.".utf8)
        message.append(Self.body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(Self.secret.utf8)))
        let hex = mac.map { String(format: "%02x", $0) }.joined()
        #expect(WebhookSignature.sign(body: Self.body, secret: Self.secret, at: Self.signedAt) == "t=1772442000,v1=\(hex)")
    }

    @Test("a signed body verifies, within the tolerance either way")
    func signedBodyVerifies() throws {
        let header = WebhookSignature.sign(body: Self.body, secret: Self.secret, at: Self.signedAt)
        for offset in [0.0, 299, -299] {
            try WebhookSignature.verify(
                header: header, body: Self.body, secret: Self.secret, now: Self.signedAt.addingTimeInterval(offset))
        }
    }

    @Test("members other than t and v1, and extra v1 values, do not stop a valid signature")
    func unknownMembersAreIgnored() throws {
        let header = WebhookSignature.sign(body: Self.body, secret: Self.secret, at: Self.signedAt)
        let widened = "v0=abc, \(header), v1=\(String(repeating: "0", count: 64))"
        try WebhookSignature.verify(header: widened, body: Self.body, secret: Self.secret, now: Self.signedAt)
    }

    @Test("a changed body is refused")
    func tamperedBodyIsRefused() {
        let header = WebhookSignature.sign(body: Self.body, secret: Self.secret, at: Self.signedAt)
        var tampered = Self.body
        tampered[tampered.startIndex + 2] = UInt8(ascii: "E")
        #expect(throws: WebhookSignatureError.mismatch) {
            try WebhookSignature.verify(header: header, body: tampered, secret: Self.secret, now: Self.signedAt)
        }
    }

    @Test("another secret is refused")
    func wrongSecretIsRefused() {
        let header = WebhookSignature.sign(body: Self.body, secret: Self.secret, at: Self.signedAt)
        #expect(throws: WebhookSignatureError.mismatch) {
            try WebhookSignature.verify(
                header: header, body: Self.body, secret: TenantWebhookService.newSecret(), now: Self.signedAt)
        }
    }

    @Test("a signature older or newer than the tolerance is refused", arguments: [-301.0, 301.0])
    func staleSignatureIsRefused(offset: Double) {
        let header = WebhookSignature.sign(body: Self.body, secret: Self.secret, at: Self.signedAt.addingTimeInterval(offset))
        #expect(throws: WebhookSignatureError.outsideTolerance) {
            try WebhookSignature.verify(header: header, body: Self.body, secret: Self.secret, now: Self.signedAt)
        }
    }

    @Test("a moved timestamp does not keep an old signature fresh")
    func movedTimestampIsRefused() {
        let header = WebhookSignature.sign(body: Self.body, secret: Self.secret, at: Self.signedAt.addingTimeInterval(-3600))
        let moved = header.replacingOccurrences(of: "t=1772438400", with: "t=1772442000")
        #expect(moved != header)
        #expect(throws: WebhookSignatureError.mismatch) {
            try WebhookSignature.verify(header: moved, body: Self.body, secret: Self.secret, now: Self.signedAt)
        }
    }

    @Test("a malformed header is refused", arguments: [
        "", "t=1772442000", "v1=00ff", "t=soon,v1=00ff", "t=1772442000,v1=", "t=1772442000,v1=0g",
        "t=1772442000,v1=ABCDEF", "t=1772442000,v1=abc", "t=1,t=2,v1=00ff", "t=1772442000;v1=00ff",
    ])
    func malformedHeaderIsRefused(header: String) {
        #expect(throws: WebhookSignatureError.malformedHeader) {
            try WebhookSignature.verify(header: header, body: Self.body, secret: Self.secret, now: Self.signedAt)
        }
    }

    @Test("a new secret is 32 random bytes in base64url")
    func secretsAreRandom() {
        let first = TenantWebhookService.newSecret()
        #expect(first.count == 43)
        #expect(Data(base64URLEncoded: first)?.count == 32)
        #expect(first != TenantWebhookService.newSecret())
    }
}
