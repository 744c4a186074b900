/// `requested_expiry` (CIBA §7.1): how many seconds the client wants the request to stay open,
/// a positive integer, which in a form arrives as a string. Countersign accepts 1–300 seconds
/// and defaults to 300: an approval on a phone is a now-or-never decision (decision 5 of the
/// standards checklist). Anything else — zero, negative, fractional, signed, too long, or with a
/// leading zero (`05`: a number has one spelling, so two clients never differ on it) — is
/// `invalid_request`; it is not silently capped, so a client never believes it has more time
/// than it has.
struct RequestedExpiry: Sendable, Equatable {
    static let allowed = 1...NewApproval.longestLifetime
    static let standard = RequestedExpiry(checkedSeconds: NewApproval.longestLifetime)

    let seconds: Int

    /// `raw` nil (not sent) gives the default.
    init(_ raw: String?) throws {
        guard let raw else {
            self = Self.standard
            return
        }
        guard (1...6).contains(raw.utf8.count), raw.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              raw.utf8.first != 0x30,
              let seconds = Int(raw), Self.allowed.contains(seconds) else {
            throw BackchannelAuthenticationError.invalidRequestedExpiry
        }
        self.seconds = seconds
    }

    private init(checkedSeconds: Int) { seconds = checkedSeconds }
}
