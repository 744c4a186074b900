/// The authentication context class of a passkey sign-in with user verification,
/// `urn:countersign:acr:passkey`: a key bound to the origin (phishing-resistant) unlocked by a
/// biometric or PIN, which meets every class Countersign defines unless a policy names the
/// class without a `passkey` alternative (`AuthenticatorPolicy`). A passkey sign-in without
/// user verification proves possession and presence, and counts as `…:confirm`.
///
/// Only the hosted sign-in can meet it (a CIBA request has no browser to run WebAuthn in), so
/// it is not an `AuthenticationClass`, whose classes name what a phone answers with.
enum PasskeyClass {
    static let urn = AuthenticationClass.prefix + "passkey"

    /// Whether a sign-in request asks for a passkey: the first of its `acr_values` that
    /// Countersign knows is this class (`acr_values` is an ordered preference, OpenID Connect
    /// Core §3.1.2.1).
    static func isRequired(by acrValues: [String]?) -> Bool {
        acrValues?.first { $0 == urn || AuthenticationClass(urn: $0) != nil } == urn
    }
}
