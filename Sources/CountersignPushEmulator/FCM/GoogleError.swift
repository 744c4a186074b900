import CountersignCore

/// An error as Google's APIs return it (`google.rpc.Status` in JSON), the shape FCM HTTP v1
/// senders parse; `errorCode` becomes the `FcmError` detail FCM adds.
struct GoogleError: Error, Sendable {
    var httpStatus: Int
    var status: String
    var message: String
    var errorCode: String?

    /// 401: Google's wording for a missing, unknown or expired access token. It carries no
    /// `FcmError` detail, since the request never reached FCM.
    static let unauthenticated = GoogleError(
        httpStatus: 401, status: "UNAUTHENTICATED",
        message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
            + "other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.")

    static func invalidArgument(_ message: String) -> GoogleError {
        GoogleError(httpStatus: 400, status: "INVALID_ARGUMENT", message: message, errorCode: "INVALID_ARGUMENT")
    }

    var response: EmulatorResponse {
        var error: [String: JSONValue] = [
            "code": .integer(Int64(httpStatus)), "message": .string(message), "status": .string(status),
        ]
        if let errorCode {
            error["details"] = .array([.object([
                "@type": .string("type.googleapis.com/google.firebase.fcm.v1.FcmError"),
                "errorCode": .string(errorCode),
            ])])
        }
        var headers: [(name: String, value: String)] = []
        if httpStatus == 401 {
            headers.append(("www-authenticate", #"Bearer realm="https://accounts.google.com/", error="invalid_token""#))
        }
        // Google asks for a pause on quota and availability errors; one second keeps tests fast.
        if httpStatus == 429 || httpStatus == 503 { headers.append(("retry-after", "1")) }
        return .json(status: httpStatus, JSONValue.object(["error": .object(error)]).canonicalString, headers: headers)
    }
}
