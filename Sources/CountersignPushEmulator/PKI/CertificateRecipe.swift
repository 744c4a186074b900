import Foundation

/// The fixed parts of the certificates the emulator PKI makes: key types, extensions, the
/// `openssl ca` configuration and the validity windows.
enum CertificateRecipe {
    /// A certificate's validity window in the `YYMMDDHHMMSSZ` form `openssl ca` takes.
    struct Validity {
        var notBefore: String
        var notAfter: String

        /// From a day ago (tolerating a clock slightly behind ours) for `days` days.
        static func current(days: Int) -> Validity {
            Validity(from: Date().addingTimeInterval(-86_400), to: Date().addingTimeInterval(Double(days) * 86_400))
        }

        /// From ten days ago to yesterday: what a forgotten push certificate looks like.
        static var expired: Validity {
            Validity(from: Date().addingTimeInterval(-10 * 86_400), to: Date().addingTimeInterval(-86_400))
        }

        private init(from start: Date, to end: Date) {
            notBefore = Self.format(start)
            notAfter = Self.format(end)
        }

        private static func format(_ date: Date) -> String {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let fields = [parts.year! % 100, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!]
            return fields.map { $0 < 10 ? "0\($0)" : "\($0)" }.joined() + "Z"
        }
    }

    static func p256KeyArguments(output: String) -> [String] {
        ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", output]
    }

    /// Apple's push certificates carry RSA 2048 keys, so the client certificates do too.
    static func rsaKeyArguments(output: String) -> [String] {
        ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", output]
    }

    static let serverExtensions = """
        [ server_certificate ]
        basicConstraints = critical,CA:FALSE
        keyUsage = critical,digitalSignature
        extendedKeyUsage = serverAuth
        subjectAltName = DNS:localhost,IP:127.0.0.1

        """

    static let clientExtensions = """
        [ client_certificate ]
        basicConstraints = critical,CA:FALSE
        keyUsage = critical,digitalSignature,keyEncipherment
        extendedKeyUsage = clientAuth

        """

    /// A minimal `openssl ca` configuration: the database lives in `workspace`, and the
    /// subject is taken as requested (`-preserveDN`), so that `UID` keeps its place before `CN`
    /// as in Apple's certificates.
    static func authorityConfiguration(workspace: String) -> String {
        """
        [ ca ]
        default_ca = emulator_ca
        [ emulator_ca ]
        database = \(workspace)/index.txt
        new_certs_dir = \(workspace)/issued
        serial = \(workspace)/serial
        default_md = sha256
        policy = any_subject
        unique_subject = no
        email_in_dn = no
        [ any_subject ]
        commonName = supplied

        """
    }

    /// A distinguished name for `openssl req -subj`, whose `/`, `+`, `=` and `\` separate
    /// fields unless escaped.
    static func subject(_ fields: [(name: String, value: String)]) -> String {
        fields.map { field in
            var escaped = ""
            for character in field.value {
                if "/+=\\".contains(character) { escaped.append("\\") }
                escaped.append(character)
            }
            return "/\(field.name)=\(escaped)"
        }.joined()
    }

    static func write(_ text: String, to file: URL) throws {
        do {
            try Data(text.utf8).write(to: file)
        } catch {
            throw EmulatorError.file(path: file.path, reason: "cannot be written (\(error.localizedDescription))")
        }
    }
}
