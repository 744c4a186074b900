import Foundation
import Testing
@testable import CountersignKit

@Suite struct DeviceEndpointsTests {
    @Test(arguments: [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/device/v1"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/device/v1"),
        ("http://127.0.0.1:8080/t/acme", "http://127.0.0.1:8080/t/acme/device/v1"),
        ("https://auth.example.com/t/acme/", "https://auth.example.com/t/acme/device/v1"),
    ])
    func endpointsAreBelowTheServerURLWithoutADoubleSlash(_ server: String, _ base: String) throws {
        let endpoints = try #require(DeviceEndpoints(server: URL(string: server)!))
        #expect(endpoints.enrollments.absoluteString == base + "/enrollments")
        #expect(endpoints.device.absoluteString == base + "/self")
        #expect(endpoints.pushToken.absoluteString == base + "/self/push-token")
    }

    @Test(arguments: ["https://auth.example.com/?tenant=acme", "https://auth.example.com/#acme"])
    func aServerURLWithAQueryOrFragmentHasNoEndpoints(_ server: String) {
        #expect(DeviceEndpoints(server: URL(string: server)!) == nil)
    }
}
