import ServiceLifecycle

/// Ends every device live stream when the server shuts down gracefully. An open stream is a
/// request in flight, and the HTTP server waits for those; listed after the application in the
/// service group, this service is shut down first, so the streams end and the server can stop.
struct LiveStreamCloser: Service {
    let events: ApprovalEvents

    func run() async throws {
        try? await gracefulShutdown()
        events.finishAll()
    }
}
