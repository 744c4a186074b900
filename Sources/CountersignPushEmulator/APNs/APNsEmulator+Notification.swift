import Foundation

extension APNsEmulator {
    /// One request as received, after the HTTP/2 framing: what a test asserts on.
    ///
    /// ```swift
    /// let sent = apns.notifications().last
    /// #expect(sent?.header("apns-push-type") == "alert")
    /// ```
    public struct Notification: Sendable {
        /// The `:method` pseudo-header.
        public var method: String
        /// The `:path` pseudo-header.
        public var path: String
        /// The last component of the path (`/3/device/<token>`).
        public var deviceToken: String
        /// The regular header fields (no pseudo-headers) with lowercase names, in the order
        /// received, duplicates kept so that a sender repeating one is visible.
        public var headers: [(name: String, value: String)]
        /// The request body as sent.
        public var body: Data
        /// The JWT of `authorization: bearer …`, when there is one.
        public var providerToken: String?
        /// The subject common name of the client certificate (certificate authentication).
        public var clientCertificateSubject: String?
        /// The 1-based number of the TLS connection it came on, in handshake order: a sender
        /// that reuses its connection sends everything on 1.
        public var connection: Int
        /// When it arrived, by the emulator's `now`.
        public var receivedAt: Date

        /// The first value of the header `name` (give it in lowercase), or nil.
        public func header(_ name: String) -> String? {
            headers.first { $0.name == name }?.value
        }

        init(_ request: EmulatorRequest, fields: APNsHeaderFields, receivedAt: Date) {
            method = request.method
            path = request.path
            let bytes = request.path.utf8
            deviceToken = bytes.lastIndex(of: UInt8(ascii: "/")).map { String(Substring(bytes[bytes.index(after: $0)...])) }
                ?? request.path
            headers = request.headers
            body = request.body
            providerToken = fields.authorization.flatMap(BearerCredential.credential(in:))
            clientCertificateSubject = request.connection.clientCertificateSubject
            connection = request.connection.number
            self.receivedAt = receivedAt
        }
    }

    /// What the emulator answers once a request passed the built-in checks.
    public enum Verdict: Sendable {
        /// 200 with an empty body.
        case accept
        /// `status` with `{"reason":"<reason>"}`; `timestamp` (milliseconds since 1970) is added
        /// to the body when given, as Apple does for 410 `Unregistered`.
        case reject(status: Int, reason: String, timestamp: Int64? = nil)
    }
}
