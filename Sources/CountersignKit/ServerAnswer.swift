import CountersignCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP answer from the server, read the way the device protocol means it: 2xx carries the
/// result, anything else an `ErrorBody`.
struct ServerAnswer: Sendable {
    let status: Int
    let body: Data
    /// Where a 3xx answer points, for the error message.
    let location: String?

    /// Sends `request` and returns whatever the server answered; only the absence of an answer
    /// is thrown.
    static func exchange(_ request: URLRequest, over transport: any HTTPTransport) async throws(CountersignError) -> ServerAnswer {
        do {
            let (body, response) = try await transport.send(request)
            return ServerAnswer(
                status: response.statusCode, body: body, location: response.value(forHTTPHeaderField: "Location"))
        } catch {
            throw CountersignError(transportFailure: error)
        }
    }

    var isSuccess: Bool { (200..<300).contains(status) }

    /// The protocol error of a non-2xx answer, if the body is one.
    var errorBody: ErrorBody? {
        try? JSONDecoder().decode(ErrorBody.self, from: body)
    }

    /// The body of a 2xx answer as `type`; `what` names it in the error.
    func decode<Result: Decodable>(_ type: Result.Type, what: String) throws(CountersignError) -> Result {
        do { return try Timestamps.decoder().decode(Result.self, from: body) } catch {
            throw .invalidServerResponse("the \(what) could not be decoded")
        }
    }

    /// What a non-2xx answer to the (unsigned) enrollment request means: a 4xx protocol error
    /// is the server refusing this enrollment.
    var enrollmentFailure: CountersignError {
        if (400..<500).contains(status), let error = errorBody {
            return .enrollmentRejected(code: error.error, description: error.errorDescription)
        }
        return failure
    }

    /// What a non-2xx answer to a device-signed request means. `unknown_device` and
    /// `device_deregistered` say the server has forgotten the device, and `user_deregistered`
    /// that the last wrong PIN removed it — believed only with a deregistration notice signed by
    /// the server's key for this device and this request, since the caller then erases the
    /// enrollment. A `user_deregistered` without a notice is passed on as the server's refusal,
    /// for the caller to confirm with a signed request of its own.
    func deviceRequestFailure(serverKey: ECPublicJWK, deviceID: String, nonce: String) -> CountersignError {
        guard let error = errorBody else { return failure }
        let code = DeviceErrorCode(rawValue: error.error)
        let notice = error.deregistration.flatMap {
            DeregistrationNotice.verified($0, serverKey: serverKey, deviceID: deviceID, nonce: nonce)
        }
        if status == 401, [DeviceErrorCode.unknownDevice, .deviceDeregistered].contains(code) {
            guard let notice else {
                return .invalidServerResponse(
                    "the server said this device is no longer enrolled, without a notice signed by its key; nothing was erased")
            }
            return Self.removal(notice)
        }
        if code == .userDeregistered, let notice { return Self.removal(notice) }
        if status == 403, code == .handoverPending { return .handoverPending }
        return failure
    }

    /// What a signed removal means to the user: why their enrollment is gone.
    static func removal(_ notice: DeregistrationNotice) -> CountersignError {
        switch notice.reason {
        case .pinAttemptsExceeded: .userDeregistered
        case .userRemoved: .userDisenrolled
        case .deviceRemoved, nil: .deviceDeregistered
        }
    }

    /// What a non-2xx answer means when nothing more specific applies.
    var failure: CountersignError {
        if let error = errorBody {
            if DeviceErrorCode(rawValue: error.error) == .wrongPIN {
                return .wrongPIN(attemptsRemaining: error.attemptsRemaining)
            }
            return .server(status: status, code: error.error, description: error.errorDescription)
        }
        switch status {
        case 300..<400:
            // Device requests are signed for one URL, so they are never redirected.
            return .invalidServerResponse(
                "the server redirected the request (HTTP \(status)) to \(location ?? "nowhere"); check the server URL")
        case 502, 503, 504:
            // A gateway answered because the server behind it did not.
            return .serverNotReachable
        default:
            return .invalidServerResponse("HTTP \(status) without a protocol error body")
        }
    }
}
