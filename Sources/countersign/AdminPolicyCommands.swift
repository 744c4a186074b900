import ArgumentParser
import Foundation

/// `countersign admin policy …`: the tenant's authentication policy (docs/api.md).
struct PolicyCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy", abstract: "The tenant's authentication policy (keys with authentication-policy:manage).",
        subcommands: [Show.self, Set.self, LiftSuppression.self])

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The policy in force.")
        @OptionGroup var options: AdminOptions
        func run() async throws { try await options.client().print("GET", options.tenantPath("/authentication-policy")) }
    }

    /// Changes the members given and keeps the others: the API replaces the policy whole, so the
    /// current one is read first.
    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change members of the policy; the others stay.")
        @OptionGroup var options: AdminOptions
        @Option(name: .customLong("default-acr"), help: "The class a request requires when it asks for none.")
        var defaultAcr: String?
        @Option(name: .customLong("minimum-acr"), help: "No request requires less.") var minimumAcr: String?
        @Option(name: .customLong("pin-attempt-limit"), help: "Wrong PINs in a row before the enrollment is removed.")
        var pinAttemptLimit: Int?
        @Option(name: .customLong("biometric-pin-fallback"), help: "true or false.") var biometricPINFallback: Bool?
        @Option(name: .customLong("custom-pin-fallback"), help: "true or false.") var customPINFallback: Bool?
        @Option(name: .customLong("number-match-choices"), help: "true: pick among three; false: type the number.")
        var numberMatchChoices: Bool?
        @Option(name: .customLong("user-requests-per-minute"), help: "0 for no limit.") var userRequestsPerMinute: Int?
        @Option(name: .customLong("client-requests-per-minute"),
                help: "bc-authorize requests per minute of a client without its own limit; 0 for no limit.")
        var clientRequestsPerMinute: Int?
        @Option(name: .customLong("not-requested-suppression-seconds"), help: "0 for no pause.")
        var notRequestedSuppressionSeconds: Int?
        @Option(help: "Whether devices may receive TOTP seeds: true or false.") var totp: Bool?
        @Option(name: .customLong("push-delivery-allowed"),
                help: "Whether clients may receive their tokens in CIBA push mode: true or false.")
        var pushDeliveryAllowed: Bool?
        @Option(name: .customLong("session-idle-seconds"),
                help: "A browser session ends after this long without use (60 to 86400).")
        var sessionIdleSeconds: Int?
        @Option(name: .customLong("session-max-age-seconds"),
                help: "A browser session ends this long after sign-in, however active (300 to 2592000).")
        var sessionMaxAgeSeconds: Int?
        @Option(name: .customLong("remembered-browser-days"),
                help: "How many days a sign-in may remember a browser for, unless a client says (0: never, to 90).")
        var rememberedBrowserDays: Int?
        @Option(name: .customLong("passkeys-enabled"), help: "Whether users may register and sign in with passkeys: true or false.")
        var passkeysEnabled: Bool?
        @Option(name: .customLong("passkey-rp-id"),
                help: "The WebAuthn RP ID (a domain: the server's host or a parent of it); empty: the server's host.")
        var passkeyRPID: String?
        @Option(name: .customLong("passkey-rp-name"), help: "The name authenticators show; empty: the tenant's name.")
        var passkeyRPName: String?
        @Option(name: .customLong("passkey-origin"),
                help: "An origin besides the server's own (https://…, android:apk-key-hash:…); repeat for several; replaces the list.")
        var passkeyOrigins: [String] = []
        @Option(name: .customLong("passkey-top-origin"), help: "A top-level origin allowed to frame a ceremony; replaces the list.")
        var passkeyTopOrigins: [String] = []
        @Option(name: .customLong("passkey-user-verification"), help: "required, preferred or discouraged.")
        var passkeyUserVerification: String?
        @Option(name: .customLong("passkey-attestation"), help: "none, indirect or direct.") var passkeyAttestation: String?
        @Option(name: .customLong("passkey-allow-unattested"),
                help: "Whether authenticators without trusted attestation may register: true or false.")
        var passkeyAllowUnattested: Bool?
        @Option(name: .customLong("passkey-sign-count-regression"),
                help: "reject or flag: what a signature counter that did not increase does.")
        var passkeySignCountRegression: String?
        @Option(name: .customLong("passkey-attestation-root"),
                help: "A PEM file of a root that attestation may chain to; repeat for several; replaces the list.")
        var passkeyAttestationRoots: [String] = []
        @Option(name: .customLong("passkey-allowed-aaguid"),
                help: "An authenticator model (AAGUID) that may register passkeys; repeat for several; replaces the list.")
        var passkeyAllowedAAGUIDs: [String] = []
        @Option(name: .customLong("passkey-denied-aaguid"),
                help: "An authenticator model (AAGUID) that may not; repeat for several; replaces the list.")
        var passkeyDeniedAAGUIDs: [String] = []
        @Option(name: .customLong("passkey-device-bound-only"), help: "Refuse passkeys that may be synced: true or false.")
        var passkeyDeviceBoundOnly: Bool?
        @Option(help: ArgumentHelp(AlternativesArgument.help)) var alternatives: [String] = []
        @Option(name: .customLong("disabled-factors"),
                help: "Factors the tenant does not use, joined by commas (custom,biometric); empty: none.")
        var disabledFactors: String?
        @Option(name: .customLong("post-quantum-sealing"),
                help: "Seal request details with X-Wing to devices that announced a key: true or false.")
        var postQuantumSealing: Bool?
        @Option(name: .customLong("minimum-factors"),
                help: "How many of the PIN and the biometric key an enrollment must bring (0 to 2).")
        var minimumFactors: Int?
        @Option(name: .customLong("client-assertion-max-lifetime-seconds"),
                help: "The longest a private_key_jwt client assertion may be valid, exp - iat (60 to 86400; default 300).")
        var clientAssertionMaximumLifetime: Int?
        @Option(name: .customLong("risk-rules-file"),
                help: "A JSON file holding the risk rules, an array (docs/risk.md); replaces them all. [] removes them.")
        var riskRulesFile: String?
        @Option(name: .customLong("risk-mode"), help: "enforce, or dry_run to only record what the rules would do.")
        var riskMode: String?

        func run() async throws {
            let client = try options.client()
            let path = options.tenantPath("/authentication-policy")
            var policy = try await client.send("GET", path) as? [String: Any] ?? [:]
            let changes: [(String, Any?)] = [
                ("default_acr", defaultAcr), ("minimum_acr", minimumAcr), ("pin_attempt_limit", pinAttemptLimit),
                ("biometric_pin_fallback", biometricPINFallback), ("custom_pin_fallback", customPINFallback),
                ("number_match_choices", numberMatchChoices), ("user_requests_per_minute", userRequestsPerMinute),
                ("client_requests_per_minute", clientRequestsPerMinute),
                ("not_requested_suppression_seconds", notRequestedSuppressionSeconds), ("totp", totp),
                ("push_delivery_allowed", pushDeliveryAllowed), ("session_idle_seconds", sessionIdleSeconds),
                ("session_max_age_seconds", sessionMaxAgeSeconds), ("remembered_browser_days", rememberedBrowserDays),
                ("post_quantum_sealing", postQuantumSealing),
                ("minimum_factors", minimumFactors), ("client_assertion_max_lifetime_seconds", clientAssertionMaximumLifetime),
            ]
            for case let (name, value?) in changes {
                // An empty class removes it.
                if let text = value as? String, text.isEmpty { policy[name] = nil } else { policy[name] = value }
            }
            var passkeys = policy["passkeys"] as? [String: Any] ?? [:]
            let roots = try passkeyAttestationRoots.map { try String(contentsOfFile: $0, encoding: .utf8) }
            let passkeyChanges: [(String, Any?)] = [
                ("enabled", passkeysEnabled), ("rp_id", passkeyRPID), ("rp_name", passkeyRPName),
                ("origins", passkeyOrigins.isEmpty ? nil : passkeyOrigins),
                ("top_origins", passkeyTopOrigins.isEmpty ? nil : passkeyTopOrigins),
                ("user_verification", passkeyUserVerification), ("attestation", passkeyAttestation),
                ("allow_unattested", passkeyAllowUnattested), ("sign_count_regression", passkeySignCountRegression),
                ("allowed_aaguids", passkeyAllowedAAGUIDs.isEmpty ? nil : passkeyAllowedAAGUIDs),
                ("denied_aaguids", passkeyDeniedAAGUIDs.isEmpty ? nil : passkeyDeniedAAGUIDs),
                ("device_bound_only", passkeyDeviceBoundOnly),
                ("attestation_roots", roots.isEmpty ? nil : roots),
            ]
            for case let (name, value?) in passkeyChanges {
                if let text = value as? String, text.isEmpty { passkeys[name] = nil } else { passkeys[name] = value }
            }
            if !passkeys.isEmpty { policy["passkeys"] = passkeys }
            if !alternatives.isEmpty {
                policy["authenticators"] = try AlternativesArgument.merged(
                    alternatives, into: policy["authenticators"] as? [String: Any])
            }
            if let riskRulesFile {
                let data = try Data(contentsOf: URL(fileURLWithPath: riskRulesFile))
                guard let rules = try? JSONSerialization.jsonObject(with: data) as? [Any] else {
                    throw ValidationError("\(riskRulesFile) does not hold a JSON array of risk rules")
                }
                policy["risk_rules"] = rules
            }
            if let riskMode { policy["risk_mode"] = riskMode }
            if let disabledFactors {
                policy["disabled_factors"] = disabledFactors.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
            try await client.print("PUT", path, body: policy)
        }
    }

    struct LiftSuppression: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "lift-suppression",
            abstract: "Let requests reach a user again before the pause their 'I did not request this' started ends.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The user's id.") var userID: String
        func run() async throws {
            _ = try await options.client().send("DELETE", options.tenantPath("/users/\(userID)/request-suppression"))
            print("Requests reach \(userID) again.")
        }
    }
}

/// `countersign admin webhook …`: the tenant's custom-factor verifier and event receiver
/// (docs/webhooks.md).
struct WebhookCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook", abstract: "The tenant's webhooks (keys with webhooks:manage).",
        subcommands: [Show.self, Set.self, Delete.self, Deliveries.self])

    enum Purpose: String, ExpressibleByArgument, CaseIterable {
        case customVerifier = "custom-verifier"
        case events
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A webhook's URL and dates (never its secret).")
        @OptionGroup var options: AdminOptions
        @Argument(help: "custom-verifier or events.") var purpose: Purpose
        func run() async throws { try await options.client().print("GET", options.tenantPath("/webhooks/\(purpose.rawValue)")) }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a webhook's URL; a new webhook's signing secret is shown once.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "custom-verifier or events.") var purpose: Purpose
        @Option(help: "The https URL to call.") var url: String
        @Flag(name: .customLong("rotate-secret"), help: "Give the webhook a new signing secret (shown once).")
        var rotateSecret = false
        func run() async throws {
            try await options.client().print("PUT", options.tenantPath("/webhooks/\(purpose.rawValue)"),
                                             body: ["url": url, "rotate_secret": rotateSecret])
        }
    }

    struct Delete: AsyncParsableCommand {
        @OptionGroup var options: AdminOptions
        @Argument(help: "custom-verifier or events.") var purpose: Purpose
        func run() async throws {
            _ = try await options.client().send("DELETE", options.tenantPath("/webhooks/\(purpose.rawValue)"))
            print("Deleted the \(purpose.rawValue) webhook.")
        }
    }

    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Recent events and how their delivery went.")
        @OptionGroup var options: AdminOptions
        func run() async throws { try await options.client().print("GET", options.tenantPath("/webhooks/events/deliveries")) }
    }
}
