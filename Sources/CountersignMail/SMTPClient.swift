import CCurl
import Foundation
import NIOPosix

/// Where mail is sent from: a submission server and how to reach it.
public struct SMTPServer: Sendable, Equatable {
    public enum Security: String, Sendable, Codable, CaseIterable {
        /// TLS from the first byte (RFC 8314), by convention on port 465.
        case tls
        /// Plain SMTP upgraded with STARTTLS (RFC 3207) before anything else is said, by
        /// convention on port 587. A server that does not offer STARTTLS is not sent to.
        case starttls
        /// No TLS at all: for a relay on the same host only (the server refuses it elsewhere).
        case plain
    }

    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    public var password: String?
    /// PEM certificates to trust instead of the system's roots (a relay with a private CA).
    public var caCertificates: String?
    /// The name this host gives in `EHLO`.
    public var heloName: String
    /// The whole exchange, from connecting to the server's answer to the message.
    public var timeout: Duration

    public init(host: String, port: Int, security: Security, username: String? = nil, password: String? = nil,
                caCertificates: String? = nil, heloName: String = "localhost", timeout: Duration = .seconds(30)) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
        self.caCertificates = caCertificates
        self.heloName = heloName
        self.timeout = timeout
    }

    /// The URL libcurl is given: `smtps://` for TLS from the start, `smtp://` otherwise, with the
    /// `EHLO` name as its path.
    var url: String {
        let scheme = security == .tls ? "smtps" : "smtp"
        let host = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(host):\(port)/\(heloName)"
    }
}

/// Sends messages over SMTP with libcurl: TLS or STARTTLS with the certificate checked against
/// the host name, authentication when credentials are given (the strongest SASL mechanism both
/// sides have), one message to one recipient per connection. libcurl blocks, so each send runs
/// on a thread of `MailThreads`, never on Swift's cooperative pool.
public struct SMTPClient: Sendable {
    public init() {}

    public func send(_ message: MailMessage, via server: SMTPServer) async throws(MailError) {
        let data = try message.rendered()
        let sender = message.from.description
        let recipient = message.to.description
        try await MailThreads.run { () throws(MailError) in
            try Self.transfer(data, from: sender, to: recipient, via: server)
        }
    }

    /// What the read callback hands libcurl: the message and how far it has been read.
    private final class Upload {
        let bytes: [UInt8]
        var offset = 0
        init(_ data: Data) { bytes = Array(data) }
    }

    private static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    private static func transfer(_ data: Data, from sender: String, to recipient: String,
                                 via server: SMTPServer) throws(MailError) {
        guard initialised, let handle = curl_easy_init() else { throw .connection("libcurl could not be started") }
        defer { curl_easy_cleanup(handle) }
        let upload = Upload(data)
        let uploadPointer = Unmanaged.passRetained(upload)
        defer { uploadPointer.release() }
        let recipients = curl_slist_append(nil, "<\(recipient)>")
        defer { curl_slist_free_all(recipients) }
        var errorBuffer = [CChar](repeating: 0, count: Int(ccurl_error_size))
        let milliseconds = Int(server.timeout.components.seconds * 1000 + server.timeout.components.attoseconds / 1_000_000_000_000_000)

        let code: CURLcode = errorBuffer.withUnsafeMutableBufferPointer { buffer in
            var failed: CURLcode = CURLE_OK
            func set(_ result: CURLcode) { if failed == CURLE_OK { failed = result } }
            set(ccurl_set_pointer(handle, CURLOPT_ERRORBUFFER, buffer.baseAddress))
            set(ccurl_set_string(handle, CURLOPT_URL, server.url))
            set(ccurl_set_string(handle, CURLOPT_PROTOCOLS_STR, "smtp,smtps"))
            // No proxy from the environment (all_proxy) is used for mail.
            set(ccurl_set_string(handle, CURLOPT_PROXY, ""))
            set(ccurl_set_long(handle, CURLOPT_NOSIGNAL, 1))
            set(ccurl_set_long(handle, CURLOPT_TIMEOUT_MS, max(1, milliseconds)))
            set(ccurl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, min(milliseconds, 10_000))))
            switch server.security {
            case .tls, .starttls:
                set(ccurl_set_long(handle, CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue)))
                set(ccurl_set_long(handle, CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1_2))
                set(ccurl_set_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
                set(ccurl_set_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
                if let pem = server.caCertificates {
                    let bytes = Array(pem.utf8)
                    set(bytes.withUnsafeBytes { ccurl_set_blob(handle, CURLOPT_CAINFO_BLOB, $0.baseAddress, $0.count) })
                }
            case .plain:
                set(ccurl_set_long(handle, CURLOPT_USE_SSL, Int(CURLUSESSL_NONE.rawValue)))
            }
            if let username = server.username {
                set(ccurl_set_string(handle, CURLOPT_USERNAME, username))
                set(ccurl_set_string(handle, CURLOPT_PASSWORD, server.password ?? ""))
            }
            set(ccurl_set_string(handle, CURLOPT_MAIL_FROM, "<\(sender)>"))
            set(ccurl_set_list(handle, CURLOPT_MAIL_RCPT, recipients))
            set(ccurl_set_long(handle, CURLOPT_UPLOAD, 1))
            set(ccurl_set_long(handle, CURLOPT_INFILESIZE, upload.bytes.count))
            set(ccurl_set_read_function(handle) { destination, size, count, context in
                guard let destination, let context else { return Int(CURL_READFUNC_ABORT) }
                let upload = Unmanaged<Upload>.fromOpaque(context).takeUnretainedValue()
                let length = min(size * count, upload.bytes.count - upload.offset)
                upload.bytes.withUnsafeBufferPointer { source in
                    UnsafeMutableRawPointer(destination).copyMemory(
                        from: source.baseAddress! + upload.offset, byteCount: length)
                }
                upload.offset += length
                return length
            })
            set(ccurl_set_pointer(handle, CURLOPT_READDATA, uploadPointer.toOpaque()))
            guard failed == CURLE_OK else { return failed }
            return curl_easy_perform(handle)
        }
        guard code != CURLE_OK else { return }
        var response = 0
        _ = ccurl_get_long(handle, CURLINFO_RESPONSE_CODE, &response)
        let detail = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let reason = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        throw failure(code, response: response, reason: reason)
    }

    private static func failure(_ code: CURLcode, response: Int, reason: String) -> MailError {
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout(reason)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_USE_SSL_FAILED,
             CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR:
            return .tls(reason)
        case CURLE_LOGIN_DENIED:
            return .authentication(response > 0 ? "\(response) \(reason)" : reason)
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_BAD_FUNCTION_ARGUMENT:
            return .invalidServer(reason)
        default:
            if response >= 400 { return .refused(code: response, reason) }
            return .connection(reason)
        }
    }
}

/// The threads libcurl's blocking sends run on: a few, because a send waits on the network and
/// the outbox sends a batch at once.
enum MailThreads {
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 4)
        pool.start()
        return pool
    }()

    static func run(_ body: @escaping @Sendable () throws(MailError) -> Void) async throws(MailError) {
        let result: Result<Void, MailError>
        do {
            result = try await pool.runIfActive { Result { () throws(MailError) in try body() } }
        } catch {
            throw .connection("the send was cancelled before it started")
        }
        try result.get()
    }
}
