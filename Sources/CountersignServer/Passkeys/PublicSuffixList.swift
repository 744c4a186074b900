import Foundation

/// The Public Suffix List (publicsuffix.org): the domains under which anyone may register a
/// name (`com`, `co.uk`, `github.io`), which browsers refuse as a WebAuthn RP ID, as they refuse
/// them for cookies. Read from the copy the operating system keeps up to date (Debian's and
/// Fedora's `publicsuffix` packages), not from one built into the binary: the list changes
/// every week, and a copy frozen at build time would grow wrong on a server that is not
/// rebuilt. It is read once, the first time a passkey policy names an RP ID that is a parent
/// of the server's host; a server without the file starts and serves as ever, and refuses only
/// such an RP ID, saying why (`PasskeySettings.validated`).
///
/// ```swift
/// let list = PublicSuffixList(rules: "com\n*.kawasaki.jp\n!city.kawasaki.jp\n公司.cn")
/// list.publicSuffix(of: "auth.example.com")   // "com"
/// list.isPublicSuffix("xn--55qx5d.cn")        // true: 公司.cn, as browsers compare it
/// ```
struct PublicSuffixList: Sendable {
    /// The list's rules, in ASCII (IDNA A-labels), by kind.
    private var plain: Set<String> = []
    /// `*.kawasaki.jp` is kept as `kawasaki.jp`.
    private var wildcards: Set<String> = []
    /// `!city.kawasaki.jp` is kept as `city.kawasaki.jp`.
    private var exceptions: Set<String> = []

    /// Where the operating system keeps the list.
    static let systemPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    /// The system's list, read at first use; nil when the file is absent or unreadable.
    static let system: PublicSuffixList? = PublicSuffixList(contentsOfFile: systemPath)

    /// The list in the file at `path`, or nil when it cannot be read or holds no rule.
    init?(contentsOfFile path: String) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        self.init(rules: text)
        if plain.isEmpty && wildcards.isEmpty { return nil }
    }

    /// The list written in the list's own format: a rule per line, the first word of it,
    /// `//` starting a comment.
    init(rules text: String) {
        for line in text.split(whereSeparator: \.isNewline) {
            guard let word = line.split(whereSeparator: \.isWhitespace).first, !word.hasPrefix("//") else { continue }
            var rule = String(word)
            if rule.hasPrefix("!") {
                rule.removeFirst()
                if let ascii = Self.ascii(rule) { exceptions.insert(ascii) }
            } else if rule.hasPrefix("*.") {
                if let ascii = Self.ascii(String(rule.dropFirst(2))) { wildcards.insert(ascii) }
            } else if let ascii = Self.ascii(rule) {
                plain.insert(ascii)
            }
        }
    }

    /// The public suffix of `domain` (lower-case ASCII), by the list's algorithm: the longest
    /// rule that matches, an exception rule winning and giving up its first label, and `*` (the
    /// last label) when no rule matches.
    func publicSuffix(of domain: String) -> String {
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        var length = 1
        for start in labels.indices {
            let suffix = labels[start...].joined(separator: ".")
            let count = labels.count - start
            if exceptions.contains(suffix) { return labels[(start + 1)...].joined(separator: ".") }
            if plain.contains(suffix) { length = max(length, count) }
            if start > 0, wildcards.contains(suffix) { length = max(length, count + 1) }
        }
        return labels.suffix(length).joined(separator: ".")
    }

    func isPublicSuffix(_ domain: String) -> Bool {
        publicSuffix(of: domain) == domain
    }

    /// A rule as browsers compare it: non-ASCII labels as IDNA A-labels (`公司` as `xn--55qx5d`).
    private static func ascii(_ rule: String) -> String? {
        if rule.allSatisfy(\.isASCII) { return rule.lowercased() }
        return URL(string: "https://" + rule)?.host?.lowercased()
    }
}
