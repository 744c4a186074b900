import Testing
@testable import CountersignServer

/// PKCE as the code flow will check it: S256 only, RFC 7636's own example, and each refusal's
/// OAuth error.
@Suite("Proof key for code exchange")
struct ProofKeyTests {
    // RFC 7636 Appendix B.
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    @Test("RFC 7636's example verifier meets its challenge; any other verifier does not")
    func example() throws {
        let challenge = try CodeChallenge(challenge: Self.challenge, method: "S256")
        #expect(challenge.isMet(by: try CodeVerifier(Self.verifier)))
        #expect(!challenge.isMet(by: try CodeVerifier(String(Self.verifier.dropLast()) + "l")))
        #expect(!challenge.isMet(by: try CodeVerifier(String(repeating: "a", count: 43))))
        #expect(ProofKeyError.mismatch.oauthError.code == .invalidGrant)
    }

    @Test("a challenge that is missing, plain, or not a SHA-256 is invalid_request", arguments: [
        (nil, "S256", ProofKeyError.missingChallenge),
        ("", "S256", .missingChallenge),
        (challenge, nil, .missingMethod),
        (challenge, "plain", .unsupportedMethod("plain")),
        (challenge, "s256", .unsupportedMethod("s256")),
        (String(challenge.dropLast()), "S256", .malformedChallenge),
        (challenge + "A", "S256", .malformedChallenge),
        (challenge.replacingOccurrences(of: "-", with: "+"), "S256", .malformedChallenge),
        (String(challenge.dropLast()) + "=", "S256", .malformedChallenge),
    ] as [(String?, String?, ProofKeyError)])
    func refusedChallenge(challenge: String?, method: String?, error: ProofKeyError) {
        #expect(throws: error) { try CodeChallenge(challenge: challenge, method: method) }
        #expect(error.oauthError.code == .invalidRequest)
    }

    @Test("a verifier must be 43 to 128 unreserved characters", arguments: [
        (nil, ProofKeyError.missingVerifier),
        ("", .missingVerifier),
        (String(repeating: "a", count: 42), .malformedVerifier),
        (String(repeating: "a", count: 129), .malformedVerifier),
        (String(repeating: "a", count: 42) + "+", .malformedVerifier),
        (String(repeating: "a", count: 42) + " ", .malformedVerifier),
        (String(repeating: "ä", count: 43), .malformedVerifier),
    ] as [(String?, ProofKeyError)])
    func refusedVerifier(raw: String?, error: ProofKeyError) {
        #expect(throws: error) { try CodeVerifier(raw) }
        #expect(error.oauthError.code == .invalidRequest)
    }

    @Test("the shortest and longest verifiers of every allowed character are read")
    func verifierBounds() throws {
        _ = try CodeVerifier(String(repeating: "A-._~z9", count: 7).prefix(43).description)
        _ = try CodeVerifier(String(repeating: "x", count: 128))
    }
}
