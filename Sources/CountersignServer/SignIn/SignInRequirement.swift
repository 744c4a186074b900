/// What a hosted sign-in requires, worked out once from its `acr_values`, its client and the
/// tenant's policy: the class (`RequiredClass`, where a passkey may make a class reachable),
/// and which of the phone and a passkey can answer it.
struct SignInRequirement: Sendable {
    let required: RequiredClass
    /// The request asks for the passkey class (`PasskeyClass.isRequired`).
    let passkeyAsked: Bool
    /// Whether an approval on the phone can answer: the request does not ask for a passkey, and
    /// the class has an alternative a phone answers with.
    let phone: Bool
    /// Whether a passkey sign-in that verifies its user can answer.
    let passkey: Bool
    /// Whether the phone is asked only after the user's directory password (`Client.directoryPassword`).
    let password: Bool

    init(acrValues: [String]?, client: Client, policy: AuthenticationPolicy) {
        required = RequiredClass(requested: acrValues, client: client, policy: policy, browser: true)
        passkeyAsked = PasskeyClass.isRequired(by: acrValues)
        phone = !passkeyAsked && !policy.alternatives(for: required.value, client: client).isEmpty
        passkey = policy.passkeys.enabled && (passkeyAsked || policy.passkeyReaches(required.value, client: client))
        password = client.directoryPassword
    }

    /// Whether a passkey that only tests presence is enough: the request needs a confirmation.
    var presenceIsEnough: Bool { passkey && !passkeyAsked && required.value == .confirm }

    /// Whether a passkey sign-in of class `acr` answers the request: the passkey class where a
    /// passkey may, a presence test (`…:confirm`) where that is enough.
    func accepts(passkeyClass acr: String) -> Bool {
        acr == PasskeyClass.urn ? passkey : acr == AuthenticationClass.confirm.urn && presenceIsEnough
    }

    /// Whether a sign-in with `context` (a browser session's) answers the request: a passkey's
    /// as above (its `amr` names where the key lives, `hwk` or `swk`), a phone's when the phone
    /// may answer and its class is as strong as the one required; so a session of a
    /// confirmation does not answer a request for a PIN (OpenID Connect Core §3.1.2.1:
    /// `acr_values`, and the client's and tenant's floors, as for CIBA). For a client that asks
    /// for the directory password first, a phone's session answers only if it began with the
    /// password (`pwd`); a passkey's stands on its own.
    func accepts(_ context: AuthenticationContext) -> Bool {
        if context.acr == PasskeyClass.urn || context.amr.contains("hwk") || context.amr.contains("swk") {
            return accepts(passkeyClass: context.acr)
        }
        guard phone, !password || context.amr.contains("pwd"),
              let signedIn = AuthenticationClass(urn: context.acr) else { return false }
        return signedIn.satisfies(required.value)
    }
}
