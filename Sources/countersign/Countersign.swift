import ArgumentParser
import Foundation

@main
struct Countersign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "countersign",
        abstract: "Countersign: push authentication and transaction approval.",
        subcommands: [Serve.self, Admin.self, DeviceCommand.self, PasskeyCommand.self, CIBACommand.self, RecoverAdminKey.self, Bench.self])
}

/// A flag's value, else the environment variable's, else nil.
func setting(_ flag: String?, _ environmentVariable: String) -> String? {
    if let flag, !flag.isEmpty { return flag }
    if let value = ProcessInfo.processInfo.environment[environmentVariable], !value.isEmpty { return value }
    return nil
}
