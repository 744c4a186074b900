import CountersignCore
import Foundation
import Hummingbird
import NIOCore

/// A device's live stream (`GET /device/v1/requests/stream`): Server-Sent Events carrying every
/// pending request when it opens, then each new request sealed for the device and each request
/// that leaves its inbox, within milliseconds of the change on this node. A comment line every
/// 15 seconds keeps proxies from closing an idle connection. The stream ends after
/// `maximumDuration`, so that a device removed meanwhile does not keep listening; the device
/// reconnects with a fresh signature.
struct RequestStream: Sendable {
    static let keepaliveInterval: Duration = .seconds(15)
    static let maximumDuration: Duration = .seconds(1800)

    let services: ServerServices
    let approvals: ApprovalService
    let device: Device

    func response() -> Response {
        // Subscribe before reading the inbox, so that a request created in between is not
        // missed (it may arrive twice; devices key requests by id).
        let events = services.approvalEvents.subscribe(deviceID: device.id)
        let services = services
        let approvals = approvals
        let device = device
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store", .init("X-Accel-Buffering")!: "no"],
            body: ResponseBody { writer in
                let gauge = services.metrics.liveStreams
                gauge.increment()
                defer { gauge.decrement() }
                let (lines, output) = AsyncStream.makeStream(of: ByteBuffer.self)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for envelope in try await approvals.inbox(for: device).reversed() {
                            output.yield(try Self.frame(RequestStreamEvent.request, envelope))
                        }
                        for await event in events {
                            switch event {
                            case .request(let envelope): output.yield(try Self.frame(RequestStreamEvent.request, envelope))
                            case .closed(let closed): output.yield(try Self.frame(RequestStreamEvent.closed, closed))
                            }
                        }
                        output.finish()
                    }
                    group.addTask {
                        let clock = ContinuousClock()
                        let end = clock.now.advanced(by: Self.maximumDuration)
                        while clock.now < end {
                            try await Task.sleep(for: min(Self.keepaliveInterval, clock.now.duration(to: end)))
                            output.yield(ByteBuffer(string: ": keepalive\n\n"))
                        }
                        output.finish()
                    }
                    // Written from this task only: the writer is not shared.
                    try await writer.write(ByteBuffer(string: ": connected\n\n"))
                    for await line in lines {
                        try await writer.write(line)
                    }
                    group.cancelAll()
                }
                try await writer.finish(nil)
            })
    }

    private static func frame(_ event: String, _ value: some Encodable) throws -> ByteBuffer {
        // JSON from our encoder has no raw newlines, so one `data:` line carries it.
        ByteBuffer(string: "event: \(event)\ndata: \(String(decoding: try JSON.encode(value), as: UTF8.self))\n\n")
    }
}
