import CountersignCommandLine
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads one line from the terminal without echoing it (a password); from a pipe, reads it as is.
func readSecret(prompt: String) -> String {
    readSecretLine(prompt: prompt) ?? ""
}

/// `readSecret`, or nil when standard input is not a terminal and ends without a line.
func readSecretLine(prompt: String) -> String? {
    guard isatty(STDIN_FILENO) == 1 else { return readLine(strippingNewline: true) }
    var original = termios()
    tcgetattr(STDIN_FILENO, &original)
    var silent = original
    silent.c_lflag &= ~tcflag_t(ECHO)
    FileHandle.standardOutput.write(Data(prompt.utf8))
    tcsetattr(STDIN_FILENO, TCSANOW, &silent)
    defer {
        tcsetattr(STDIN_FILENO, TCSANOW, &original)
        print("")
    }
    return readLine(strippingNewline: true) ?? ""
}

/// Where a command takes a PIN from: the environment or standard input for scripts (a flag
/// would show the PIN in process lists), otherwise the terminal without echo.
struct PINSource {
    /// The PIN a script gives instead of typing it.
    static let environmentVariable = "COUNTERSIGN_DEVICE_PIN"
    /// The new PIN a script gives to `device pin change`.
    static let newPINEnvironmentVariable = "COUNTERSIGN_DEVICE_NEW_PIN"

    /// Read the PINs from standard input, one a line, instead of asking.
    let fromStandardInput: Bool

    /// Whether a script gives the PIN, so that it is not asked on the terminal.
    var isScripted: Bool {
        fromStandardInput || ProcessInfo.processInfo.environment[Self.environmentVariable]?.isEmpty == false
    }

    /// A PIN given by the script, if any: the environment variable, else a line of input when
    /// `fromStandardInput`.
    func scripted(_ environmentVariable: String = Self.environmentVariable) -> String? {
        if let value = ProcessInfo.processInfo.environment[environmentVariable], !value.isEmpty { return value }
        return fromStandardInput ? readLine(strippingNewline: true) ?? "" : nil
    }

    /// The current PIN: scripted, or asked once.
    func current(prompt: String = "PIN: ") -> String {
        scripted() ?? readSecret(prompt: prompt)
    }

    /// A new PIN: scripted, or asked twice, which must agree.
    func new(_ environmentVariable: String = Self.environmentVariable) throws -> String {
        if let scripted = scripted(environmentVariable) { return scripted }
        let first = readSecret(prompt: "New PIN (4 to 12 digits): ")
        guard readSecret(prompt: "Repeat the new PIN: ") == first else {
            throw TerminalFailure("the two PINs differ")
        }
        return first
    }
}
