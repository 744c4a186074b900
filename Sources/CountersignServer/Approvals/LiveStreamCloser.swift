import ServiceLifecycle

/// Ends every device live stream, and every Shared Signals long poll, when the server shuts down
/// gracefully. An open stream or a waiting poll is a request in flight, and the HTTP server waits
/// for those; listed after the application in the service group, this service is shut down
/// first, so they end and the server can stop.
struct LiveStreamCloser: Service {
    let events: ApprovalEvents
    var polls: StreamSignal?

    func run() async throws {
        try? await gracefulShutdown()
        events.finishAll()
        polls?.close()
    }
}
