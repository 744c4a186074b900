import Foundation
import Testing
@testable import CountersignKit

/// The URLs of the inbox, the live stream and each request, below the device-protocol base.
@Suite struct RequestEndpointsTests {
    let endpoints = DeviceEndpoints(server: URL(string: "https://auth.example.com/t/acme/")!)!

    @Test func theInboxAndTheLiveStreamAreBelowTheBase() {
        #expect(endpoints.requests.absoluteString == "https://auth.example.com/t/acme/device/v1/requests")
        #expect(endpoints.requestStream.absoluteString == "https://auth.example.com/t/acme/device/v1/requests/stream")
    }

    @Test func aRequestAndItsResponseAreBelowTheInbox() {
        #expect(endpoints.request("txn_01HZX3-a.b~c")?.absoluteString
            == "https://auth.example.com/t/acme/device/v1/requests/txn_01HZX3-a.b~c")
        #expect(endpoints.response(to: "txn_01HZX3")?.absoluteString
            == "https://auth.example.com/t/acme/device/v1/requests/txn_01HZX3/response")
    }

    @Test(arguments: ["", ".", "..", "stream", "txn/1", "txn?x=1", "txn#1", "txn 1", "txn%2F1", "txn_é"])
    func anIDThatIsNotOnePlainPathSegmentHasNoURL(_ id: String) {
        #expect(endpoints.request(id) == nil)
        #expect(endpoints.response(to: id) == nil)
    }
}
