import Foundation

/// The device-protocol URLs of one server, `<server>/device/v1/…`. They are built as text so
/// that a tenant path (`https://auth.example.com/t/acme`) is kept and a trailing slash on the
/// server URL does not produce `//device`. Each is the exact URL a request is sent to and signed
/// for.
struct DeviceEndpoints: Sendable, Equatable {
    /// `POST`: submit an enrollment request.
    let enrollments: URL
    /// `GET`: the tenant's device-protocol key, checked against the URI's `fp` before enrolling.
    let serverKey: URL
    /// `GET`, `PATCH`, `DELETE`: the device itself.
    let device: URL
    /// `PUT`, `DELETE`: the device's push channel.
    let pushToken: URL
    /// `PUT`: replaces the PIN key.
    let pin: URL
    /// `POST`: adds factors to the enrollment.
    let factors: URL
    /// `GET`: the device's inbox of undecided requests.
    let requests: URL
    /// `GET`: the inbox as a live stream of Server-Sent Events.
    let requestStream: URL
    /// `GET`: the security notices shown to the device.
    let notices: URL
    /// `POST`: starts a handover to a new device.
    let handovers: URL
    /// `<server>/device/v1/requests`, the base of the per-request URLs.
    private let requestsBase: String

    /// Nil when the server URL carries a query or a fragment, which no path can be appended to.
    init?(server: URL) {
        guard server.query == nil, server.fragment == nil else { return nil }
        var base = server.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        base += "/device/v1"
        guard let enrollments = URL(string: base + "/enrollments"), let serverKey = URL(string: base + "/server-key"),
              let device = URL(string: base + "/self"), let pushToken = URL(string: base + "/self/push-token"),
              let pin = URL(string: base + "/self/pin"), let factors = URL(string: base + "/self/factors"),
              let requests = URL(string: base + "/requests"),
              let requestStream = URL(string: base + "/requests/stream"),
              let notices = URL(string: base + "/notices"),
              let handovers = URL(string: base + "/handovers") else { return nil }
        self.enrollments = enrollments
        self.serverKey = serverKey
        self.device = device
        self.pushToken = pushToken
        self.pin = pin
        self.factors = factors
        self.requests = requests
        self.requestStream = requestStream
        self.notices = notices
        self.handovers = handovers
        self.requestsBase = base + "/requests"
    }

    /// `GET`: one request addressed to the device. Nil for an id that is not a single path
    /// segment of unreserved characters: request ids are `txn_…`, and anything else would need
    /// escaping that the signed URL and the server's view of it could disagree on.
    func request(_ requestID: String) -> URL? {
        guard Self.isPathSegment(requestID) else { return nil }
        return URL(string: requestsBase + "/" + requestID)
    }

    /// `POST`: the signed answer to one request.
    func response(to requestID: String) -> URL? {
        guard Self.isPathSegment(requestID) else { return nil }
        return URL(string: requestsBase + "/" + requestID + "/response")
    }

    /// `POST`: "not me" on one notice (ids are `ntc_…`).
    func notMe(_ noticeID: String) -> URL? {
        guard Self.isPathSegment(noticeID) else { return nil }
        return URL(string: notices.absoluteString + "/" + noticeID + "/not-me")
    }

    /// `GET`: one handover this device started (`hov_…`); with `action`, `POST` `approve` or `deny`.
    func handover(_ id: String, _ action: String? = nil) -> URL? {
        guard Self.isPathSegment(id) else { return nil }
        return URL(string: handovers.absoluteString + "/" + id + (action.map { "/" + $0 } ?? ""))
    }

    /// RFC 3986 unreserved characters only; not a dot segment, nor `stream`, which names the
    /// live stream beside the requests.
    private static func isPathSegment(_ text: String) -> Bool {
        !text.isEmpty && text != "." && text != ".." && text != "stream"
            && text.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "-._~".unicodeScalars.contains(scalar))
            }
    }
}
