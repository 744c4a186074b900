import ArgumentParser

@main
struct Countersign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "countersign",
        abstract: "Countersign: push authentication and transaction approval.",
        subcommands: [Serve.self, Admin.self, DeviceCommand.self, PasskeyCommand.self, CIBACommand.self, PAMCommand.self, RecoverAdminKey.self, Bench.self])

    /// `serve` limits glibc's arenas here, on the main thread before anything has awaited: a
    /// thread that allocates before the limit is set takes an arena of its own that the limit
    /// does not take back, and by the time a command's `run` starts, the task pool's threads
    /// have (two on two cores under load, where the limit allows one).
    static func main() async {
        if CommandLine.arguments.dropFirst().first == Serve.configuration.commandName {
            MallocArenas.limitToCores()
        }
        await main(nil)
    }
}
