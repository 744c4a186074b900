import CountersignCore
import Foundation
import Testing
@testable import CountersignKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The live stream of one enrollment's requests, read from Server-Sent Events.
@Suite struct LiveRequestsTests {
    static func frame(_ event: String, _ value: some Encodable) throws -> String {
        "event: \(event)\ndata: \(try ApprovalTests.json(value))\n\n"
    }

    static func collect(_ requests: LiveRequests) async throws(CountersignError) -> [LiveRequestEvent] {
        var events: [LiveRequestEvent] = []
        for try await event in requests { events.append(event) }
        return events
    }

    @Test(arguments: [1, 5, 1000])
    func requestsAndClosuresAreReportedInOrderAndARepeatedRequestOnce(_ pieceSize: Int) async throws {
        try await withTemporaryRoot { root in
            let device = try await ApprovalTests.device(in: root)
            let envelope = try ApprovalTests.envelope(to: device)
            let closed = RequestClosed(id: "txn_1", status: "approved")
            let stream = try ": connected\n\n" + Self.frame("request", envelope) + ": keepalive\n\n"
                + Self.frame("request", envelope) + Self.frame("closed", closed)
            let server = FakeServer { _ in .eventStream(stream, pieceSize: pieceSize) }

            let events = try await Self.collect(device.authenticator(server).liveRequests(device.enrollment.id))
            #expect(events == [
                .request(ApprovalRequest(enrollmentID: device.enrollment.id, envelope: envelope)), .closed(closed),
            ])
        }
    }

    @Test func theStreamIsASignedGETThatAsksForAnEventStream() async throws {
        try await withTemporaryRoot { root in
            let device = try await ApprovalTests.device(in: root)
            let server = FakeServer { _ in .eventStream(": connected\n\n") }
            _ = try await Self.collect(device.authenticator(server).liveRequests(device.enrollment.id))

            let request = try #require(server.requests.first)
            #expect(request.url?.absoluteString == ApprovalTests.server + "/device/v1/requests/stream")
            #expect(request.value(forHTTPHeaderField: "Accept") == "text/event-stream")
            let signature = try DeviceRequestSignature.parse(
                authorizationHeader: request.value(forHTTPHeaderField: "Authorization"))
            #expect(throws: Never.self) {
                try signature.verify(key: device.keys.signer.publicKey, method: "GET", url: request.url!.absoluteString,
                                     body: Data(), now: ApprovalTests.now, window: 60)
            }
        }
    }

    @Test func nothingIsSentBeforeIterationStarts() async throws {
        try await withTemporaryRoot { root in
            let device = try await ApprovalTests.device(in: root)
            let server = FakeServer { _ in .eventStream("") }
            _ = device.authenticator(server).liveRequests(device.enrollment.id)
            #expect(server.requests.isEmpty)
        }
    }

    @Test func eventsOfUnknownTypesAreSkipped() async throws {
        try await withTemporaryRoot { root in
            let device = try await ApprovalTests.device(in: root)
            let server = FakeServer { _ in .eventStream("event: announcement\ndata: {}\n\ndata: hello\n\n") }
            #expect(try await Self.collect(device.authenticator(server).liveRequests(device.enrollment.id)).isEmpty)
        }
    }

    @Test func anUndecodableEventEndsTheStreamWithAnError() async throws {
        try await withTemporaryRoot { root in
            let device = try await ApprovalTests.device(in: root)
            let server = FakeServer { _ in .eventStream("event: request\ndata: {\"id\":\"txn_1\"}\n\n") }
            await #expect(throws: CountersignError.invalidServerResponse("a request event of the live stream could not be decoded")) {
                try await Self.collect(device.authenticator(server).liveRequests(device.enrollment.id))
            }
        }
    }

    @Test func aRefusedStreamIsThrownAsTheServersError() async throws {
        try await withTemporaryRoot { root in
            let device = try await ApprovalTests.device(in: root)
            let server = FakeServer { _ in .json(401, #"{"error":"request_expired","error_description":"check the clock"}"#) }
            await #expect(throws: CountersignError.server(status: 401, code: "request_expired", description: "check the clock")) {
                try await Self.collect(device.authenticator(server).liveRequests(device.enrollment.id))
            }
        }
    }

    @Test func anAnswerThatIsNotAnEventStreamIsRefused() async throws {
        try await withTemporaryRoot { root in
            let device = try await ApprovalTests.device(in: root)
            let server = FakeServer { _ in .json(200, #"{"requests":[]}"#) }
            await #expect(throws: CountersignError.invalidServerResponse("the live stream is not a text/event-stream")) {
                try await Self.collect(device.authenticator(server).liveRequests(device.enrollment.id))
            }
        }
    }

    @Test func leavingTheLoopEndsTheConnection() async throws {
        try await withTemporaryRoot { root in
            let device = try await ApprovalTests.device(in: root)
            let envelope = try ApprovalTests.envelope(to: device)
            let server = FakeServer { _ in .eventStream(try! Self.frame("request", envelope), staysOpen: true) }
            for try await event in device.authenticator(server).liveRequests(device.enrollment.id) {
                #expect(event == .request(ApprovalRequest(enrollmentID: device.enrollment.id, envelope: envelope)))
                break
            }
            #expect(server.endedStreams == 1)
        }
    }

    @Test func cancellingTheReaderEndsTheConnection() async throws {
        try await withTemporaryRoot { root in
            let device = try await ApprovalTests.device(in: root)
            let server = FakeServer { _ in .eventStream(": connected\n\n", staysOpen: true) }
            let authenticator = device.authenticator(server)
            let reader = Task { try await Self.collect(authenticator.liveRequests(device.enrollment.id)) }
            while server.requests.isEmpty { await Task.yield() }
            reader.cancel()
            #expect(try await reader.value.isEmpty)
            #expect(server.endedStreams == 1)
        }
    }
}
