import ArgumentParser
import CountersignCommandLine
import CountersignCore
import CountersignKit
import CountersignWebAuthn
import Foundation

/// The terminal as a WebAuthn platform authenticator: passkeys for any relying party, their
/// keys in a directory, the relying party's JSON in and the browser's JSON out.
struct PasskeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passkey",
        abstract: "Use this terminal as a passkey authenticator (WebAuthn) for any relying party.",
        discussion: """
            register and sign-in read the options a relying party's server made \
            (PublicKeyCredentialCreationOptionsJSON or PublicKeyCredentialRequestOptionsJSON, bare or inside \
            {"publicKey": …}) from a file or standard input, act as the browser and the authenticator at \
            --origin, and print the RegistrationResponseJSON or AuthenticationResponseJSON to send back. \
            Prompts go to standard error.

            Keys are software P-256 keys in files readable only by you (--store), not in hardware: anyone who \
            can read them as you can sign in with these passkeys. --user-verification biometric uses the \
            terminal's biometric stand-in: a software key released by a confirmation typed on the terminal, \
            not by biometry; the answer then carries the UV flag, which a relying party reads as "the user was \
            verified". It is for trying relying parties out, not for guarding accounts.
            """,
        subcommands: [Register.self, SignIn.self, List.self, Remove.self])

    struct StoreOptions: ParsableArguments {
        @Option(help: "Where passkeys are kept. Default: the device store (COUNTERSIGN_DEVICE_STORE, else ~/.countersign/device) + /passkeys.")
        var store: String?

        var keyStore: FilePasskeyStore {
            if let store, !store.isEmpty { return FilePasskeyStore(root: URL(fileURLWithPath: store)) }
            let device = setting(nil, "COUNTERSIGN_DEVICE_STORE")
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".countersign/device").path
            return FilePasskeyStore(root: URL(fileURLWithPath: device).appendingPathComponent("passkeys"))
        }
    }

    enum UserVerification: String, ExpressibleByArgument, CaseIterable {
        case biometric, none
    }

    struct CeremonyOptions: ParsableArguments {
        @Option(help: "The origin of the site, e.g. https://example.org (https, or http://localhost).") var origin: String
        @Option(help: "The relying party's options: a JSON file, or - for standard input.") var options = "-"
        @Option(name: .customLong("user-verification"),
                help: "biometric: the biometric stand-in (a confirmation on the terminal, not biometry); none: no verification.")
        var userVerification: UserVerification = .none

        var terminal: PasskeyTerminal { PasskeyTerminal(optionsFromStandardInput: options == "-") }

        var verifier: (any PasskeyUserVerifier)? {
            switch userVerification {
            case .biometric: PasskeyBiometricStandIn.verifier(terminal)
            case .none: nil
            }
        }

        /// The options, bare or as `{"publicKey": …}` (what `navigator.credentials` takes).
        func read<Options: Decodable>(_ type: Options.Type, named name: String) throws -> Options {
            let data: Data
            do {
                data = options == "-"
                    ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: options))
            } catch {
                throw TerminalFailure("cannot read \(options): \(error.localizedDescription)")
            }
            let decoder = JSONDecoder()
            if let bare = try? decoder.decode(Options.self, from: data) { return bare }
            do { return try decoder.decode(Wrapped<Options>.self, from: data).publicKey } catch {
                throw TerminalFailure("the options are not \(name): \(error)")
            }
        }
    }

    private struct Wrapped<Options: Decodable>: Decodable {
        let publicKey: Options
    }

    /// Prints `value` as one line of JSON, at once: the output is usually piped.
    static func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
        StandardOutput.flush()
    }

    /// Runs a passkey operation, reporting its refusal as the browser's error name and a reason.
    static func perform<Result>(_ operation: () async throws(PasskeyAuthenticatorError) -> Result) async throws -> Result {
        do { return try await operation() } catch { throw TerminalFailure(error.description) }
    }

    /// The credential `id` names, with its key name among its RP's passkeys.
    static func named(_ id: [UInt8], in store: FilePasskeyStore) async throws -> (PasskeyCredential, String)? {
        let all = try await perform { () async throws(PasskeyAuthenticatorError) in try await store.credentials(rpID: nil) }
        guard let credential = all.first(where: { $0.id == id }) else { return nil }
        let siblings = all.filter { $0.rpID == credential.rpID }
        let names = PasskeyKeyName.names(for: siblings)
        guard let index = siblings.firstIndex(where: { $0.id == id }) else { return nil }
        return (credential, names[index])
    }

    struct Register: AsyncParsableCommand {
        enum Attestation: String, ExpressibleByArgument, CaseIterable {
            case none, packed

            var format: PasskeyAttestationFormat {
                switch self {
                case .none: .none
                case .packed: .packed
                }
            }
        }

        static let configuration = CommandConfiguration(
            abstract: "Create a passkey from creation options; print the RegistrationResponseJSON.",
            discussion: """
                --attestation packed gives packed self attestation (the new key signs the registration, AAGUID \
                b9691d63-0755-41a4-a4b7-3014aa41c895) when the relying party asks for attestation; when it asks \
                for none, the answer has none, as a browser's would. --synced makes a synced-style passkey: backup \
                eligible and backed up (BE=1, BS=1) and a signature counter that stays 0.
                """)
        @OptionGroup var store: StoreOptions
        @OptionGroup var ceremony: CeremonyOptions
        @Option(help: "none (the default) or packed self attestation.") var attestation: Attestation = .none
        @Flag(help: "Make a synced-style passkey (BE=1, BS=1, counter always 0).") var synced = false

        func run() async throws {
            let options = try ceremony.read(PublicKeyCredentialCreationOptionsJSON.self, named: "PublicKeyCredentialCreationOptionsJSON")
            let keyStore = store.keyStore
            let authenticator = PasskeyAuthenticator(
                store: keyStore, attestation: attestation.format, credentialKind: synced ? .synced : .deviceBound,
                userVerifier: ceremony.verifier)
            let response = try await PasskeyCommand.perform { () async throws(PasskeyAuthenticatorError) in
                try await authenticator.register(options, origin: ceremony.origin)
            }
            try PasskeyCommand.printJSON(response)
            if let (credential, name) = try await PasskeyCommand.named(response.rawId.bytes, in: keyStore) {
                ceremony.terminal.say("Created passkey \(RequestSummary.shown(name)) for \(credential.rpID).")
            }
        }
    }

    struct SignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-in",
            abstract: "Sign in with a passkey from request options; print the AuthenticationResponseJSON.",
            discussion: """
                Only passkeys of the request's RP ID are offered, and of those only the ones allowCredentials names \
                when it names any. With several, a numbered menu of key names ("<display name> <registered time>", \
                as `countersign passkey list` shows them) is shown on standard error; --credential picks one by \
                name without asking.
                """)
        @OptionGroup var store: StoreOptions
        @OptionGroup var ceremony: CeremonyOptions
        @Option(help: "The key name of the passkey to use, as `countersign passkey list` shows it.") var credential: String?

        func run() async throws {
            let options = try ceremony.read(PublicKeyCredentialRequestOptionsJSON.self, named: "PublicKeyCredentialRequestOptionsJSON")
            let authenticator = PasskeyAuthenticator(
                store: store.keyStore, userVerifier: ceremony.verifier,
                selector: TerminalCredentialSelector(named: credential, terminal: ceremony.terminal))
            let response = try await PasskeyCommand.perform { () async throws(PasskeyAuthenticatorError) in
                try await authenticator.signIn(options, origin: ceremony.origin)
            }
            try PasskeyCommand.printJSON(response)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the passkeys kept here, by key name.")
        @OptionGroup var store: StoreOptions
        @Option(name: .customLong("rp-id"), help: "Only the passkeys of this RP ID.") var rpID: String?

        func run() async throws {
            let authenticator = PasskeyAuthenticator(store: store.keyStore)
            let credentials = try await PasskeyCommand.perform { () async throws(PasskeyAuthenticatorError) in
                try await authenticator.credentials(rpID: rpID)
            }
            if credentials.isEmpty {
                print("No passkeys.")
                return
            }
            var first = true
            for rpID in credentials.map(\.rpID).uniqued() {
                let ofRP = credentials.filter { $0.rpID == rpID }
                for (credential, name) in zip(ofRP, PasskeyKeyName.names(for: ofRP)) {
                    if !first { print() }
                    first = false
                    let user = RequestSummary.shown(credential.user.name)
                        + (credential.user.displayName.isEmpty ? "" : " (\(RequestSummary.shown(credential.user.displayName)))")
                    let counter = credential.kind == .synced ? "counter always 0" : "counter \(credential.signCount)"
                    print("""
                        \(RequestSummary.shown(name))
                          rp       \(RequestSummary.shown(credential.rpID))
                          user     \(user)
                          id       \(Data(credential.id).base64URLEncodedString)
                          created  \(Timestamps.format(credential.createdAt))
                          kind     \(credential.kind.rawValue), \(counter)
                        """)
                }
            }
            StandardOutput.flush()
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a passkey here. The relying party keeps its public key until you remove it there too.")
        @OptionGroup var store: StoreOptions
        @Argument(help: ArgumentHelp(
            "The passkey's credential id (base64url), as `countersign passkey list` shows it.",
            discussion: """
                One id in 64 begins with '-', which would be read as an option: write the id after '--' \
                (`countersign passkey remove -- <id>`), which works for every id.
                """))
        var id: String

        func run() async throws {
            let keyStore = store.keyStore
            guard let bytes = Data(base64URLEncoded: id),
                  let (credential, name) = try await PasskeyCommand.named(Array(bytes), in: keyStore) else {
                throw TerminalFailure("no passkey here has the id \(id) (`countersign passkey list` shows them)")
            }
            try await PasskeyCommand.perform { () async throws(PasskeyAuthenticatorError) in
                try await PasskeyAuthenticator(store: keyStore).delete(credential)
            }
            print("Removed \(RequestSummary.shown(name)) for \(credential.rpID).")
        }
    }
}

extension Sequence where Element: Hashable {
    /// The elements in order, each once.
    fileprivate func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
