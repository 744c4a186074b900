import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CountersignError {
    /// What a failure of an `HTTPTransport` means to the person holding the device: is it their
    /// connection (they can fix it), the server (they cannot), or something else?
    init(transportFailure error: any Error) {
        switch error {
        case let error as CountersignError: self = error
        case let error as URLError: self.init(urlError: error)
        case is CancellationError: self = .actionCancelled
        default: self = .serverNotReachable
        }
    }

    init(urlError: URLError) {
        switch urlError.code {
        case .notConnectedToInternet, .networkConnectionLost, .dataNotAllowed, .internationalRoamingOff, .callIsActive:
            self = .networkConnectivityFailure
        case .cannotConnectToHost, .cannotFindHost, .timedOut, .dnsLookupFailed, .secureConnectionFailed:
            self = .serverNotReachable
        case .cancelled:
            self = .actionCancelled
        case .badServerResponse, .cannotParseResponse, .cannotDecodeContentData, .cannotDecodeRawData:
            self = .invalidServerResponse("the answer is not a well-formed HTTP response")
        default:
            // Certificate failures, too many redirects and the like: whatever answered is not a
            // server this device can talk to.
            self = .serverNotReachable
        }
    }
}
