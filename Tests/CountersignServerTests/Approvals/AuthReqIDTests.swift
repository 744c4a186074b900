import Foundation
import Testing
@testable import CountersignServer

/// The `auth_req_id` a relying party is given: 256 random bits in base64url, never beginning
/// with `-`, so that `countersign ciba poll <auth_req_id>` does not read it as an option (a CI
/// run here failed on one that did: the command printed its help).
@Suite("auth_req_id")
struct AuthReqIDTests {
    @Test("20,000 drawn: all 43 base64url characters, none beginning with a dash, all different")
    func neverBeginsWithADash() {
        let drawn = (0..<20_000).map { _ in ApprovalService.newAuthReqID() }
        #expect(drawn.allSatisfy { $0.utf8.count == 43 && !$0.hasPrefix("-") })
        #expect(drawn.allSatisfy { $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" } })
        #expect(Set(drawn).count == drawn.count)
        #expect(drawn.contains { $0.dropFirst().contains("-") }, "a dash elsewhere stays possible")
    }
}
