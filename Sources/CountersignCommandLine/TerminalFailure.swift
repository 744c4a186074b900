/// A failure of a terminal command, as the text shown for it.
package struct TerminalFailure: Error, CustomStringConvertible {
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}
