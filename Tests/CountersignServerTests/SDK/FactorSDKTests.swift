import CountersignCore
import CountersignKit
import Foundation
import Synchronization
import Testing
@testable import CountersignServer

/// A user at the device, scripted: the answers a test wants, in order, and every challenge the
/// SDK put to them.
final class ScriptedUser: ChallengeHandler {
    private let pins: Mutex<[PINAnswer]>
    private let numbers: Mutex<(answer: (NumberMatchChallenge) -> NumberMatchAnswer, seen: [[Int64]?])>
    let confirmation: ConfirmationAnswer
    let biometric: BiometricAnswer
    let custom: CustomAnswer
    let pinChallenges = Mutex<[PINChallenge]>([])

    init(confirmation: ConfirmationAnswer = .confirm, pins: [PINAnswer] = [], biometric: BiometricAnswer = .defaultPrompt,
         custom: CustomAnswer = .cancel,
         number: @escaping @Sendable (NumberMatchChallenge) -> NumberMatchAnswer = { _ in .cancel }) {
        self.confirmation = confirmation
        self.pins = Mutex(pins)
        self.biometric = biometric
        self.custom = custom
        self.numbers = Mutex((number, []))
    }

    func confirm(_ challenge: ConfirmationChallenge) async -> ConfirmationAnswer { confirmation }
    func matchNumber(_ challenge: NumberMatchChallenge) async -> NumberMatchAnswer {
        numbers.withLock { state in
            state.seen.append(challenge.choices)
            return state.answer(challenge)
        }
    }
    func enterPIN(_ challenge: PINChallenge) async -> PINAnswer {
        pinChallenges.withLock { $0.append(challenge) }
        return pins.withLock { $0.isEmpty ? .cancel : $0.removeFirst() }
    }
    func verifyBiometric(_ challenge: BiometricChallenge) async -> BiometricAnswer { biometric }
    func provideCustomData(_ challenge: CustomChallenge) async -> CustomAnswer { custom }
}

@Suite("Device factors through CountersignKit")
struct FactorSDKTests {
    /// An authenticator whose biometric stand-in gives `verification`, enrolled for a new user.
    private func enroll(
        _ server: TestServer, _ username: String, factors: EnrollmentFactors,
        biometric: SoftwareBiometricKeys.Verification = .verified
    ) async throws -> (CountersignAuthenticator, Enrollment) {
        let userID = try await server.createUser(username)
        let store = FileKeyStore(root: server.scratch.directory.appendingPathComponent("device-\(UUID().uuidString)"))
        let kit = CountersignAuthenticator(
            keyStore: store, transport: server.transport,
            biometricKeys: SoftwareBiometricKeys(biometry: .fingerprint) { _ in biometric },
            now: server.clock.function)
        let enrollment = try await kit.enroll(
            uri: try await server.enrollmentURI(for: userID), deviceName: "phone", platform: .linux, factors: factors)
        return (kit, enrollment)
    }

    private func newest(_ kit: CountersignAuthenticator) async throws -> ApprovalRequest {
        try #require(try await kit.pendingRequests().first)
    }

    @Test("a PIN set at enrollment approves a PIN request; a wrong one is asked again with the attempts left")
    func pinWithRetry() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, enrollment) = try await enroll(server, "ada", factors: .init(pin: "2468"))
            #expect(try await kit.deviceStatus(enrollment.id).factors == .init(pin: true, biometric: false, totp: false))
            let authReqID = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:pin")])
            let user = ScriptedUser(pins: [.pin("1111"), .pin("2468")])
            let outcome = try await kit.respond(to: try await newest(kit), with: user)
            guard case .approved = outcome else { Issue.record("expected approval, got \(outcome)"); return }
            #expect(user.pinChallenges.withLock { $0.map(\.attemptsRemaining) } == [nil, 2])
            server.clock.advance(by: 6)
            #expect(try await server.token(client, authReqID).status == 200)
        }
    }

    @Test("three wrong PINs deregister the enrollment and the SDK erases it")
    func pinLimit() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, enrollment) = try await enroll(server, "ada", factors: .init(pin: "2468"))
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:pin")])
            let user = ScriptedUser(pins: [.pin("0000"), .pin("1111"), .pin("2222")])
            await #expect(throws: CountersignError.userDeregistered) {
                try await kit.respond(to: try await newest(kit), with: user)
            }
            #expect(try await kit.enrollments().contains { $0.id == enrollment.id } == false)
        }
    }

    @Test("number matching: the SDK offers the choices and signs the number picked")
    func numberMatch() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, _) = try await enroll(server, "ada", factors: .init())
            let started = try await server.bcAuthorize(
                client, [("scope", "openid"), ("login_hint", "ada"), ("acr_values", "urn:countersign:acr:number-match")])
            let shown = Int64(try #require(started["match_number"] as? Int))
            let right = try await kit.respond(to: try await newest(kit), with: ScriptedUser(number: { _ in .number(shown) }))
            guard case .approved = right else { Issue.record("expected approval, got \(right)"); return }

            let second = try await server.bcAuthorize(
                client, [("scope", "openid"), ("login_hint", "ada"), ("acr_values", "urn:countersign:acr:number-match")])
            let other = Int64(try #require(second["match_number"] as? Int))
            let wrong = try await kit.respond(
                to: try await newest(kit),
                with: ScriptedUser(number: { challenge in .number(challenge.choices?.first { $0 != other } ?? 10) }))
            guard case .denied(.wrongNumber, _) = wrong else { Issue.record("expected wrong_number, got \(wrong)"); return }
        }
    }

    @Test("a biometric request is answered with the biometric key, or with the PIN when biometrics fail")
    func biometricAndFallback() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, _) = try await enroll(server, "ada", factors: .init(pin: "2468", biometric: true))
            let first = try await server.startApproval(
                client, user: "ada", extra: [("acr_values", "urn:countersign:acr:biometric")])
            let approved = try await kit.respond(to: try await newest(kit), with: ScriptedUser())
            guard case .approved = approved else { Issue.record("expected approval, got \(approved)"); return }
            server.clock.advance(by: 6)
            let tokens = try await server.token(client, first)
            let claims = try server.verifiedClaims(try #require(tokens["id_token"] as? String), keys: try await server.jwks()).claims
            #expect(claims["amr"] as? [String] == ["pop", "fpt", "mfa"])

            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:biometric")])
            let fallback = try await kit.respond(
                to: try await newest(kit), with: ScriptedUser(pins: [.pin("2468")], biometric: .pinFallback))
            guard case .approved = fallback else { Issue.record("expected approval, got \(fallback)"); return }
        }
    }

    @Test("cancelling a challenge denies the request as cancelled and reports actionCancelled")
    func cancelDenies() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, _) = try await enroll(server, "ada", factors: .init(pin: "2468"))
            let authReqID = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:pin")])
            await #expect(throws: CountersignError.actionCancelled) {
                try await kit.respond(to: try await newest(kit), with: ScriptedUser(pins: [.cancel]))
            }
            server.clock.advance(by: 6)
            #expect(try await server.token(client, authReqID).error == "access_denied")
            let stored = try await SQLApprovalTransactionRepository().find(
                authReqIDHash: ApprovalService.hash(authReqID: authReqID), on: server.database)
            #expect(stored?.denyReason == .cancelled)
        }
    }

    @Test("'I did not request this' through the SDK pauses the user's requests")
    func notRequested() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, _) = try await enroll(server, "ada", factors: .init())
            _ = try await server.startApproval(client, user: "ada")
            let outcome = try await kit.respond(to: try await newest(kit), with: ScriptedUser(confirmation: .notRequested))
            guard case .denied(.notRequested, _) = outcome else { Issue.record("expected not_requested, got \(outcome)"); return }
            #expect(try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "ada")]).status == 403)
        }
    }

    @Test("a PIN changed through the SDK is the one the server then accepts")
    func changePIN() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, enrollment) = try await enroll(server, "ada", factors: .init(pin: "2468"))
            _ = try await kit.changePIN(enrollment.id, from: "2468", to: "97531")
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:pin")])
            let user = ScriptedUser(pins: [.pin("2468"), .pin("97531")])
            guard case .approved = try await kit.respond(to: try await newest(kit), with: user) else {
                Issue.record("expected approval")
                return
            }
            #expect(user.pinChallenges.withLock { $0.count } == 2)
        }
    }

    @Test("the SDK's TOTP codes verify at the server")
    func totp() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, enrollment) = try await enroll(server, "ada", factors: .init(totp: true))
            let code = try await kit.oneTimeCode(enrollment.id, at: server.clock.now)
            let verified = try await server.form(
                "/totp/verify", [("login_hint", "ada"), ("code", code.code)], basic: client)
            #expect(verified.status == 200, "\(verified.errorDescription ?? "")")
        }
    }
}
