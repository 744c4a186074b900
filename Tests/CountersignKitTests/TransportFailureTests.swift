import Foundation
import Testing
@testable import CountersignKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct TransportFailureTests {
    @Test(arguments: [
        (URLError.Code.notConnectedToInternet, CountersignError.networkConnectivityFailure),
        (.networkConnectionLost, .networkConnectivityFailure),
        (.dataNotAllowed, .networkConnectivityFailure),
        (.internationalRoamingOff, .networkConnectivityFailure),
        (.cannotConnectToHost, .serverNotReachable),
        (.cannotFindHost, .serverNotReachable),
        (.timedOut, .serverNotReachable),
        (.dnsLookupFailed, .serverNotReachable),
        (.secureConnectionFailed, .serverNotReachable),
        (.serverCertificateUntrusted, .serverNotReachable),
        (.cancelled, .actionCancelled),
    ])
    func aURLErrorMeans(_ code: URLError.Code, _ expected: CountersignError) {
        #expect(CountersignError(transportFailure: URLError(code)) == expected)
    }

    @Test func aMalformedHTTPResponseIsAnInvalidServerResponse() {
        guard case .invalidServerResponse = CountersignError(transportFailure: URLError(.badServerResponse)) else {
            Issue.record("expected invalidServerResponse")
            return
        }
    }

    @Test func cancellationIsAnActionCancelled() {
        #expect(CountersignError(transportFailure: CancellationError()) == .actionCancelled)
    }

    @Test func aCountersignErrorFromATransportPassesThrough() {
        #expect(CountersignError(transportFailure: CountersignError.deviceDeregistered) == .deviceDeregistered)
    }
}
