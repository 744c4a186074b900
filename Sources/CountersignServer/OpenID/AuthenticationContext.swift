import Foundation

/// What an approval proves about how the user authenticated, in the terms of OpenID Connect:
/// the authentication context class (`acr`) and the methods (`amr`, RFC 8176).
///
/// Every approval is a signature by a key that was generated on an enrolled device and never
/// left it: proof of possession, `pop` (RFC 8176 §2; `hwk` or `swk` would claim to know where
/// the key lives, which the server cannot tell). The factors the device reports add the
/// user's part: `confirm` — the user looked at the request and tapped approve — is a user
/// presence test, `user`. Factors the server does not know add nothing.
///
/// Countersign defines one class, `urn:countersign:acr:device-approval`: "the user approved
/// this request, as shown, on a device enrolled to them". It is the `acr` of every ID token.
/// A requested `acr_values` list is voluntary (OpenID Connect Core §3.1.2.1): the ID token
/// names the first requested class that the approval satisfies, and otherwise the class it
/// achieved.
struct AuthenticationContext: Sendable, Equatable {
    static let deviceApproval = "urn:countersign:acr:device-approval"
    /// The classes Countersign can satisfy, for discovery.
    static let supportedClasses = [deviceApproval]

    /// The RFC 8176 method each known device factor stands for.
    private static let factorMethods = ["confirm": "user"]

    let acr: String
    let amr: [String]

    init(factors: [String], requestedClasses: [String]?) {
        var methods = ["pop"]
        for factor in factors {
            if let method = Self.factorMethods[factor], !methods.contains(method) { methods.append(method) }
        }
        amr = methods
        let achieved = Self.supportedClasses
        acr = requestedClasses?.first { achieved.contains($0) } ?? Self.deviceApproval
    }
}
