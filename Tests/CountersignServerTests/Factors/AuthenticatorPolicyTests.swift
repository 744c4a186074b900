import CountersignCore
import CountersignKit
import Foundation
import Synchronization
import Testing
@testable import CountersignServer

/// The app's hooks, scripted: the alternative to pick, and every group and step it was shown.
final class ScriptedHooks: AuthenticatorPicker, InterstitialDelegate {
    let choice: AuthenticatorPick?
    let offered = Mutex<[[AuthenticatorGroup]]>([])
    let steps = Mutex<[AuthenticatorStep]>([])

    init(choice: AuthenticatorPick? = nil) {
        self.choice = choice
    }

    func pick(among groups: [AuthenticatorGroup], for details: RequestDetails) async -> AuthenticatorPick {
        offered.withLock { $0.append(groups) }
        return choice ?? .alternative(groups[0].index)
    }

    func interstitial(before step: AuthenticatorStep, in ceremony: Ceremony) async -> Interstitial? {
        steps.withLock { $0.append(step) }
        return Interstitial(title: "Step \(step.index + 1) of \(step.total)", message: step.nextFactorID)
    }
}

@Suite("Authenticator policies: alternatives and sequences")
struct AuthenticatorPolicyTests {
    private static let biometricClass = "urn:countersign:acr:biometric"
    private static let pinClass = "urn:countersign:acr:pin"

    private func enroll(
        _ server: TestServer, _ username: String, factors: EnrollmentFactors, hooks: AuthenticatorHooks = AuthenticatorHooks()
    ) async throws -> CountersignAuthenticator {
        let userID = try await server.createUser(username)
        let store = FileKeyStore(root: server.scratch.directory.appendingPathComponent("device-\(UUID().uuidString)"))
        let kit = CountersignAuthenticator(
            keyStore: store, transport: server.transport,
            biometricKeys: SoftwareBiometricKeys(biometry: .face) { _ in .verified }, now: server.clock.function, hooks: hooks)
        _ = try await kit.enroll(
            uri: try await server.enrollmentURI(for: userID), deviceName: "phone", platform: .linux, factors: factors)
        return kit
    }

    private func claims(_ server: TestServer, _ client: TestClient, _ authReqID: String) async throws -> [String: any Sendable] {
        server.clock.advance(by: 6)
        let tokens = try await server.token(client, authReqID)
        #expect(tokens.status == 200, "\(tokens.error ?? "") \(tokens.errorDescription ?? "")")
        return try server.verifiedClaims(try #require(tokens["id_token"] as? String), keys: try await server.jwks()).claims
    }

    private func shownNumber(_ started: TestServer.Answer) throws -> Int64 {
        Int64(try #require(started["match_number"] as? Int))
    }

    @Test("one alternative of two factors: the SDK walks both, the answer proves both, the tokens name the class")
    func oneAlternative() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["authenticators": [Self.pinClass: [["device-key", "pin", "number-match"]]]])
            let client = try await server.createClient()
            let hooks = ScriptedHooks()
            let kit = try await enroll(server, "ada", factors: .init(pin: "2468"),
                                       hooks: AuthenticatorHooks(picker: hooks, interstitials: hooks))
            let started = try await server.bcAuthorize(
                client, [("scope", "openid"), ("login_hint", "ada"), ("acr_values", Self.pinClass)])
            let number = try shownNumber(started)
            let request = try #require(try await kit.pendingRequests().first)
            let details = try await kit.details(for: request)
            #expect(details.transaction.version == TransactionDetails.alternativesVersion)
            #expect(details.verification.alternatives == [["pin", "number_match"]])
            let user = ScriptedUser(pins: [.pin("2468")], number: { _ in .number(number) })
            let outcome = try await kit.respond(toDetails: details, with: user)
            guard case .approved = outcome else { Issue.record("expected approval, got \(outcome)"); return }
            #expect(hooks.offered.withLock { $0.isEmpty }, "one alternative needs no picker")
            #expect(hooks.steps.withLock { $0 } == [AuthenticatorStep(total: 2, index: 1, nextFactor: .numberMatch)])
            let tokens = try await claims(server, client, try #require(started["auth_req_id"] as? String))
            #expect(tokens["acr"] as? String == Self.pinClass)
            #expect(tokens["amr"] as? [String] == ["pop", "user", "pin", "mfa"])
        }
    }

    @Test("two alternatives: the app's picker sees both and picks the second; the tokens name the class and its methods")
    func twoAlternativesPicked() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["authenticators": [Self.biometricClass: [["biometric"], ["pin", "number-match"]]]])
            let client = try await server.createClient()
            let hooks = ScriptedHooks(choice: .alternative(1))
            let kit = try await enroll(server, "ada", factors: .init(pin: "2468", biometric: true),
                                       hooks: AuthenticatorHooks(picker: hooks, interstitials: hooks))
            let started = try await server.bcAuthorize(
                client, [("scope", "openid"), ("login_hint", "ada"), ("acr_values", Self.biometricClass)])
            let number = try shownNumber(started)
            let user = ScriptedUser(pins: [.pin("2468")], number: { _ in .number(number) })
            let outcome = try await kit.respond(to: try #require(try await kit.pendingRequests().first), with: user)
            guard case .approved = outcome else { Issue.record("expected approval, got \(outcome)"); return }
            let offered = hooks.offered.withLock { $0 }
            #expect(offered.count == 1)
            #expect(offered.first?.map(\.factors) == [[.biometric], [.pin, .numberMatch]])
            #expect(offered.first?.allSatisfy(\.isAvailable) == true)
            #expect(offered.first?[1].options.map(\.factorID) == ["pin", "number-match"])
            let tokens = try await claims(server, client, try #require(started["auth_req_id"] as? String))
            #expect(tokens["acr"] as? String == Self.biometricClass)
            #expect(tokens["amr"] as? [String] == ["pop", "user", "pin", "mfa"])

            // Without a picker the first alternative this enrollment can use is taken.
            let plain = try await enroll(server, "grace", factors: .init(pin: "1357", biometric: true))
            let second = try await server.startApproval(client, user: "grace", extra: [("acr_values", Self.biometricClass)])
            let answered = try await plain.respond(to: try #require(try await plain.pendingRequests().first), with: ScriptedUser())
            guard case .approved = answered else { Issue.record("expected approval, got \(answered)"); return }
            let face = try await self.claims(server, client, second)
            #expect(face["amr"] as? [String] == ["pop", "face", "mfa"])
        }
    }

    @Test("a sequence of three factors: an interstitial before the second and the third, each counted")
    func sequenceOfThree() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["authenticators": [Self.biometricClass: [["number-match", "pin", "biometric"]]]])
            let client = try await server.createClient()
            let hooks = ScriptedHooks()
            let kit = try await enroll(server, "ada", factors: .init(pin: "2468", biometric: true),
                                       hooks: AuthenticatorHooks(picker: hooks, interstitials: hooks))
            let started = try await server.bcAuthorize(
                client, [("scope", "openid"), ("login_hint", "ada"), ("acr_values", Self.biometricClass)])
            let number = try shownNumber(started)
            // A wrong PIN is asked again within the sequence, without walking it anew.
            let user = ScriptedUser(pins: [.pin("1111"), .pin("2468")], number: { _ in .number(number) })
            let outcome = try await kit.respond(to: try #require(try await kit.pendingRequests().first), with: user)
            guard case .approved = outcome else { Issue.record("expected approval, got \(outcome)"); return }
            #expect(hooks.steps.withLock { $0 } == [
                AuthenticatorStep(total: 3, index: 1, nextFactor: .pin), AuthenticatorStep(total: 3, index: 2, nextFactor: .biometric),
            ])
            #expect(user.pinChallenges.withLock { $0.map(\.attemptsRemaining) } == [nil, 2])
            let tokens = try await claims(server, client, try #require(started["auth_req_id"] as? String))
            #expect(tokens["acr"] as? String == Self.biometricClass)
            #expect(tokens["amr"] as? [String] == ["pop", "user", "pin", "face", "mfa"])
        }
    }

    @Test("interstitials can be switched off for authentication while the picker stays")
    func hooksPerCeremony() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["authenticators": [Self.pinClass: [["pin", "number-match"], ["custom", "pin"]]]])
            let client = try await server.createClient()
            let hooks = ScriptedHooks(choice: .cancel)
            let kit = try await enroll(server, "ada", factors: .init(pin: "2468"), hooks: AuthenticatorHooks(
                picker: hooks, interstitials: hooks, interstitialCeremonies: [.registration]))
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", Self.pinClass)])
            await #expect(throws: CountersignError.actionCancelled) {
                try await kit.respond(to: try #require(try await kit.pendingRequests().first), with: ScriptedUser())
            }
            #expect(hooks.offered.withLock { $0.count } == 1)
            #expect(hooks.steps.withLock { $0.isEmpty })
            #expect(try await kit.pendingRequests().isEmpty, "cancelling in the picker denies the request")
        }
    }

    @Test("an alternative the enrollment lacks a factor for is reported, and nothing is sent")
    func missingFactorReported() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["authenticators": [Self.biometricClass: [["biometric", "pin"], ["pin", "custom"]]]])
            let client = try await server.createClient()
            let kit = try await enroll(server, "ada", factors: .init())
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", Self.biometricClass)])
            let request = try #require(try await kit.pendingRequests().first)
            let groups = try await kit.alternatives(of: try await kit.details(for: request))
            #expect(groups.map(\.missingFactors) == [[.biometric, .pin], [.pin]])
            await #expect(throws: CountersignError.factorsNotEnrolled([.pin])) {
                try await kit.respond(to: request, with: ScriptedUser(custom: .data("ok")))
            }
            #expect(try await kit.pendingRequests().count == 1, "the request is still pending")
        }
    }

    @Test("proofs for no alternative, for another than the one named, or for a weaker class are refused; acr is not raised")
    func answersThatMeetNoAlternative() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["authenticators": [Self.pinClass: [["pin", "number-match"], ["biometric"]]]])
            let client = try await server.createClient()
            let userID = try await server.createUser("ada")
            let device = try await server.enrollFactorDevice(for: userID, pin: true, biometric: true)
            let started = try await server.bcAuthorize(
                client, [("scope", "openid"), ("login_hint", "ada"), ("acr_values", Self.pinClass)])
            let number = try shownNumber(started)
            let pin = try #require(device.pin)
            // The PIN alone, without the number: the first alternative is not met.
            let pinOnly = try await device.answer(factors: ["pin"], pinKey: pin, alternative: 0)
            #expect(pinOnly.status == 403 && pinOnly.error == "factor_required", "\(pinOnly.errorDescription ?? "")")
            // A tap, as a weaker class would take: no alternative, named or not.
            for alternative in [nil, 0, 1] as [Int64?] {
                let tap = try await device.answer(factors: ["confirm"], alternative: alternative)
                #expect(tap.status == 403 && tap.error == "factor_required", "\(tap.errorDescription ?? "")")
            }
            // An alternative the request does not have.
            let unknown = try await device.answer(factors: ["pin", "number_match"], number: number, pinKey: pin, alternative: 2)
            #expect(unknown.status == 403 && unknown.error == "factor_required")
            // A factor named twice.
            let twice = try await device.answer(factors: ["pin", "pin"], pinKey: pin, alternative: 0)
            #expect(twice.status == 400 && twice.error == "invalid_response", "\(twice.errorDescription ?? "")")
            // An alternative named where the details offer none is refused as malformed.
            try await server.setPolicy([:])
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", Self.pinClass)])
            let stray = try await device.answer(factors: ["pin"], pinKey: pin, alternative: 0)
            #expect(stray.status == 400 && stray.error == "invalid_response")
            let authReqID = try #require(started["auth_req_id"] as? String)
            #expect(try await server.token(client, authReqID).error == "authorization_pending", "nothing was decided")
        }
    }

    @Test("acr: a class with alternatives is reached by any of them; without, only its factor reaches it")
    func achievedClass() {
        let alternatives = TransactionDetails.Verification(factor: .biometric, alternatives: [[.biometric], [.pin, .numberMatch]])
        #expect(AuthenticationContext(factors: ["pin", "number_match"], verification: alternatives).acr == Self.biometricClass)
        #expect(AuthenticationContext(factors: ["pin"], verification: alternatives).acr == Self.pinClass)
        #expect(AuthenticationContext(factors: ["pin"], required: .confirm).acr == Self.pinClass)
        #expect(AuthenticationContext(factors: ["pin"], required: .biometric).acr == Self.pinClass)
        #expect(AuthenticationContext(factors: ["confirm"], required: .confirm).acr == "urn:countersign:acr:confirm")
    }

    static let badPolicies: [(policy: [String: any Sendable], says: String)] = [
        (["authenticators": ["urn:countersign:acr:gold": [["pin"]]]], "urn:countersign:acr:gold is not a class"),
        (["authenticators": [pinClass: [] as [[String]]]], "must have 1 to 8 alternatives"),
        (["authenticators": [pinClass: [[] as [String]]]], "alternative 1 must name 1 to 5 factors"),
        (["authenticators": [pinClass: [["pin"], ["fingerprint"]]]], "alternative 2 names the unknown factor \"fingerprint\""),
        (["authenticators": [pinClass: [["number_match", "pin"]]]], "names the unknown factor \"number_match\""),
        (["authenticators": [pinClass: [["pin", "pin"]]]], "alternative 1 names a factor twice"),
        (["authenticators": [pinClass: [["confirm", "number-match"]]]], "alternative 1 is weaker than the class"),
        (["authenticators": [pinClass: [["device-key"]]]], "alternative 1 is weaker than the class"),
        (["authenticators": [pinClass: [["pin", "confirm"], ["confirm", "device-key", "pin"]]]], "alternative 2 repeats alternative 1"),
        (["authenticators": [pinClass: [["custom"]]], "disabled_factors": ["custom"]], "names custom, which this tenant has switched off"),
        (["disabled_factors": ["face"]], "field disabled_factors is invalid: names the unknown factor \"face\""),
        (["disabled_factors": ["pin", "pin"]], "names a factor twice"),
        (["default_acr": pinClass, "disabled_factors": ["pin"]], "field default_acr is invalid: urn:countersign:acr:pin cannot be reached"),
        (["disabled_factors": ["confirm", "number-match", "pin", "biometric", "custom"]], "leaves no class that a user can reach"),
        (["authenticators": [pinClass: [["pin"], ["passkey", "number-match"]]]], "alternative 2 names passkey with other factors"),
        (["authenticators": [pinClass: [["passkey"], ["pin"], ["passkey"]]]], "alternative 3 repeats alternative 1"),
        (["authenticators": [pinClass: [["passkey"], ["pin", "custom"], ["custom", "pin"]]]], "alternative 3 repeats alternative 2"),
        (["authenticators": [pinClass: [["passkey"]]], "passkeys": ["enabled": false]],
         "alternative 1 names passkey, which this tenant has switched off"),
        (["authenticators": [pinClass: [["passkey"]]], "default_acr": pinClass],
         "field default_acr is invalid: urn:countersign:acr:pin cannot be reached from a phone"),
    ]

    @Test("a policy that breaks a rule is refused with the rule, the class and the alternative; nothing changes",
          arguments: badPolicies.indices)
    func badPolicyRefused(index: Int) async throws {
        let (policy, says) = Self.badPolicies[index]
        try await TestServer.routed { server in
            let answer = try await server.admin("PUT", "/admin/v1/tenants/default/authentication-policy", json: policy)
            #expect(answer.status == 400 && answer.error == "invalid_request", "\(answer.errorDescription ?? "")")
            #expect(answer.errorDescription?.contains(says) == true, "\(answer.errorDescription ?? "") should say \(says)")
            let stored = try await server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            #expect(stored["authenticators"] == nil && stored["disabled_factors"] as? [String] == [])

            let client = try await server.createClient()
            // A client's own alternatives are checked alone: the tenant's members apply when a
            // request is made.
            if let authenticators = policy["authenticators"], policy.count == 1 {
                let patched = try await server.admin(
                    "PATCH", "/admin/v1/tenants/default/clients/\(client.id)", json: ["authenticators": authenticators])
                #expect(patched.status == 400 && patched.errorDescription?.contains(says) == true,
                        "\(patched.errorDescription ?? "")")
            }
        }
    }

    @Test("a client's alternatives replace the tenant's for its classes; the tenant's switched-off factors leave them")
    func clientPolicyAndSwitchedOffFactors() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["authenticators": [Self.pinClass: [["pin"]]]])
            let banking = try await server.createClient()
            let shop = try await server.createClient(name: "Shop")
            let patched = try await server.admin(
                "PATCH", "/admin/v1/tenants/default/clients/\(shop.id)",
                json: ["authenticators": [Self.pinClass: [["custom"], ["pin", "number-match"]]]])
            #expect(patched.status == 200, "\(patched.errorDescription ?? "")")
            #expect((patched["authenticators"] as? [String: any Sendable])?[Self.pinClass] != nil)
            let userID = try await server.createUser("ada")
            let device = try await server.enrollFactorDevice(for: userID, pin: true)
            // The inbox lists the newest first; a second apart, the request ids sort by time.
            func offered(_ client: TestClient) async throws -> [[String]]? {
                server.clock.advance(by: 1)
                _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", Self.pinClass)])
                return try await device.newest().details.verification?.alternatives
            }
            #expect(try await offered(banking) == [["pin"]])
            #expect(try await offered(shop) == [["custom"], ["pin", "number_match"]])

            try await server.setPolicy(["authenticators": [Self.pinClass: [["pin"]]], "disabled_factors": ["custom"],
                                        "user_requests_per_minute": 0])
            #expect(try await offered(shop) == [["pin", "number_match"]])
            // A class whose every way is switched off is passed over like an unknown one.
            try await server.setPolicy(["disabled_factors": ["biometric", "custom"], "user_requests_per_minute": 0])
            server.clock.advance(by: 1)
            _ = try await server.startApproval(banking, user: "ada", extra: [("acr_values", Self.biometricClass)])
            #expect(try await device.newest().details.verification == .init(factor: .confirm))

            let removed = try await server.admin(
                "PATCH", "/admin/v1/tenants/default/clients/\(shop.id)", json: ["authenticators": NSNull()])
            #expect(removed.status == 200 && removed["authenticators"] == nil)
        }
    }

    @Test("a passkey alternative is the browser's: a CIBA request is sealed without it, and a class only a passkey reaches is passed over")
    func passkeyAlternativesStayOffThePhone() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["authenticators": [Self.biometricClass: [["biometric"], ["passkey"]],
                                                           Self.pinClass: [["passkey"]]],
                                        "user_requests_per_minute": 0])
            let client = try await server.createClient()
            let userID = try await server.createUser("ada")
            let device = try await server.enrollFactorDevice(for: userID, pin: true)
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", Self.biometricClass)])
            let sealed = try await device.newest().details.verification
            #expect(sealed?.factor == .biometric && sealed?.alternatives == [["biometric"]])

            server.clock.advance(by: 1)
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", Self.pinClass)])
            #expect(try await device.newest().details.verification == .init(factor: .confirm),
                    "the PIN class has no phone alternative here, so the request falls back to the default class")
        }
    }
}
