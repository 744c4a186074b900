import CountersignCore

extension TransactionDetails.Context {
    /// The longest User-Agent kept in a request's details, or a browser session's record.
    static let maximumUserAgentLength = 200

    /// Where a request came from, for the details the user sees: the peer address of the
    /// connection (a forwarding header is not trusted) and the User-Agent, shortened.
    static func requestedFrom(ipAddress: String?, userAgent: String?) -> TransactionDetails.Context {
        TransactionDetails.Context(ipAddress: ipAddress, userAgent: userAgent.map { String($0.prefix(maximumUserAgentLength)) })
    }
}
