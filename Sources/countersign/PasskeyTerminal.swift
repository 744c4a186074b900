import CountersignKit
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The terminal as the passkey commands ask on it. Standard output carries the JSON a script
/// passes on to the relying party, so every prompt goes to standard error. Answers are read
/// from standard input, unless the options came through it (`--options -`); then from the
/// controlling terminal, `/dev/tty`.
struct PasskeyTerminal: Sendable {
    let optionsFromStandardInput: Bool

    func say(_ text: String, terminator: String = "\n") {
        FileHandle.standardError.write(Data((text + terminator).utf8))
    }

    /// Shows `prompt` and reads one line; nil when there is nothing to read.
    func ask(_ prompt: String) -> String? {
        say(prompt, terminator: "")
        guard optionsFromStandardInput else { return readLine(strippingNewline: true) }
        let descriptor = open("/dev/tty", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            say("(no terminal to answer on)")
            return nil
        }
        defer { close(descriptor) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(descriptor, &byte, 1)
            if count == 1 {
                if byte == UInt8(ascii: "\n") { break }
                line.append(byte)
            } else if count < 0, errno == EINTR {
                continue
            } else {
                if line.isEmpty { return nil }
                break
            }
        }
        return String(decoding: line, as: UTF8.self)
    }
}

/// The terminal's choice among the passkeys a sign-in matches: the name given with
/// `--credential`, else the only one, else a numbered menu.
struct TerminalCredentialSelector: PasskeyCredentialSelector {
    let named: String?
    let terminal: PasskeyTerminal

    func selectCredential(keyNames: [String]) async -> String? {
        if let named { return named }
        if keyNames.count == 1 {
            terminal.say("Signing in with \(RequestSummary.shown(keyNames[0])).")
            return keyNames[0]
        }
        terminal.say("Passkeys for this site:")
        for (index, name) in keyNames.enumerated() {
            terminal.say("  \(index + 1)  \(RequestSummary.shown(name))")
        }
        let answer = terminal.ask("Number (empty to cancel): ")?.trimmingCharacters(in: .whitespaces) ?? ""
        guard let number = Int(answer), keyNames.indices.contains(number - 1) else { return nil }
        return keyNames[number - 1]
    }
}

/// The passkey commands' stand-in for a biometric check: the same kind of software key as the
/// device commands' (`BiometricStandIn`), released after a confirmation typed on the terminal,
/// asked on standard error. It shows user verification end to end and proves nothing about
/// who typed.
enum PasskeyBiometricStandIn {
    static func verifier(_ terminal: PasskeyTerminal) -> BiometricPasskeyVerifier {
        BiometricPasskeyVerifier(keys: SoftwareBiometricKeys(biometry: .other) { prompt in
            terminal.say("[\(BiometricStandIn.label)]")
            let answer = terminal.ask("\(RequestSummary.shown(prompt)) — confirm it is you [y/N]: ")?
                .trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            switch answer {
            case "y", "yes": return .verified
            case "", "n", "no": return .cancelled
            default: return .failed
            }
        })
    }
}
