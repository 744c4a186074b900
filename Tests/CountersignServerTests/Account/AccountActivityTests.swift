import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The account page's recent activity says what each request asked and why one was denied.
@Suite("Account activity: the binding message and why a request was denied")
struct AccountActivityTests {
    @Test("An answered request shows the binding message the phone showed")
    func approvedRequestShowsItsBindingMessage() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let client = try await bench.server.createClient()
            _ = try await bench.server.startApproval(client, user: "alice", bindingMessage: "Pay 42.00 EUR to ACME")
            let request = try #require(try await bench.user.kit.pendingRequests().first)
            _ = try await bench.user.kit.approve(try await bench.user.kit.details(for: request))
            let page = try await bench.account()
            #expect(page.text.contains(#"<p class="message">“Pay 42.00 EUR to ACME”</p>"#), "\(page.text)")
        }
    }

    @Test("A request denied because the wrong number was picked says so, with its binding message, not a plain 'Request denied'")
    func wrongNumberIsExplained() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let client = try await bench.server.createClient()
            let started = try await bench.server.bcAuthorize(client, [
                ("scope", "openid"), ("login_hint", "alice"), ("binding_message", "Sign in to Online banking"),
                ("acr_values", "urn:countersign:acr:number-match"),
            ])
            let shown = Int64(try #require(started["match_number"] as? Int))
            let request = try #require(try await bench.user.kit.pendingRequests().first)
            let answer = try await bench.user.kit.respond(
                to: request, with: ScriptedUser(number: { challenge in .number(challenge.choices?.first { $0 != shown } ?? 10) }))
            guard case .denied(.wrongNumber, _) = answer else { Issue.record("expected wrong_number, got \(answer)"); return }
            let page = try await bench.account()
            #expect(page.text.contains(
                #"<p class="denial">The number picked on the phone was not the one shown on the screen, so it was refused.</p>"#),
                "\(page.text)")
            #expect(page.text.contains("“Sign in to Online banking”"))
        }
    }

    @Test("Each reason a phone gives for a denial reads in words", arguments: [
        (DenyReason.declined, "You declined it on your phone."),
        (.cancelled, "It was cancelled on the phone before it was answered."),
        (.notRequested, "You said on your phone that you did not request it."),
    ])
    func denialReasonsReadInWords(reason: DenyReason, words: String) async throws {
        try await AccountBench.run(.sqlite) { bench in
            let client = try await bench.server.createClient()
            _ = try await bench.server.startApproval(client, user: "alice")
            let request = try #require(try await bench.user.kit.pendingRequests().first)
            _ = try await bench.user.kit.deny(try await bench.user.kit.details(for: request), reason: reason)
            let page = try await bench.account()
            #expect(page.text.contains(#"<p class="denial">\#(words)</p>"#), "\(page.text)")
        }
    }

    @Test("The custom verifier's reason for refusing an answer is given")
    func customRejectionGivesTheVerifierReason() {
        let event = AuditEvent(
            id: "evt_1", tenantID: "ten_1", actor: "device:dev_1", action: "approval.denied", targetType: "approval",
            targetID: "txn_1", details: ["reason": "custom_rejected", "verifier_reason": "the card is blocked"],
            occurredAt: Date(timeIntervalSince1970: 0))
        #expect(AccountActivity.denial(event, request: nil) == "The application's own check refused the answer: the card is blocked.")
    }
}
