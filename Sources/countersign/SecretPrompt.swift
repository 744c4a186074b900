import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads one line from the terminal without echoing it (a password); from a pipe, reads it as is.
func readSecret(prompt: String) -> String {
    guard isatty(STDIN_FILENO) == 1 else { return readLine(strippingNewline: true) ?? "" }
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
