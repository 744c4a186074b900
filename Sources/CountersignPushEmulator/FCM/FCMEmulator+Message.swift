import Foundation

extension FCMEmulator {
    /// One send request that passed authentication and validation, as received.
    ///
    /// ```swift
    /// let sent = fcm.messages().last
    /// #expect(sent?.androidPriority == "HIGH")
    /// ```
    public struct Message: Sendable {
        /// The project named in the path.
        public var projectID: String
        /// The raw JSON request body.
        public var body: Data
        /// `message.token`; nil for a topic or condition send.
        public var token: String?
        /// `message.data`.
        public var data: [String: String]
        /// `message.android.priority` (`NORMAL` or `HIGH`).
        public var androidPriority: String?
        /// `message.android.ttl`, e.g. `"300s"`.
        public var androidTTL: String?
        /// The bearer access token the request carried.
        public var accessToken: String
        /// When it arrived, by the emulator's `now`.
        public var receivedAt: Date
    }

    /// What the emulator answers once a message passed the built-in checks.
    public enum Verdict: Sendable {
        /// 200 with `{"name":"projects/<id>/messages/<numeric id>"}`.
        case accept
        /// Google's error body with an `FcmError` detail, e.g. `(404, "NOT_FOUND", "UNREGISTERED", …)`,
        /// `(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", …)`, `(503, "UNAVAILABLE", "UNAVAILABLE", …)`.
        /// A 429 or 503 also carries `retry-after: 1`.
        case reject(httpStatus: Int, status: String, errorCode: String, message: String)
    }
}
