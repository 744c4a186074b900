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

    /// Nil when the server URL carries a query or a fragment, which no path can be appended to.
    init?(server: URL) {
        guard server.query == nil, server.fragment == nil else { return nil }
        var base = server.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        base += "/device/v1"
        guard let enrollments = URL(string: base + "/enrollments"), let serverKey = URL(string: base + "/server-key"),
              let device = URL(string: base + "/self"),
              let pushToken = URL(string: base + "/self/push-token") else { return nil }
        self.enrollments = enrollments
        self.serverKey = serverKey
        self.device = device
        self.pushToken = pushToken
    }
}
