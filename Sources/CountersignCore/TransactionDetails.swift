import Crypto
import Foundation

/// What a device shows the user before they approve or deny: who asks, for whom, what for, from
/// where, and until when. The server serialises it as canonical JSON (`canonicalData`), seals
/// those bytes to each device, and the device signs the SHA-256 of the exact bytes it opened.
/// Because the bytes are canonical, server and device compute the same digest, and a receipt
/// proves what was shown (PSD2 dynamic linking by construction).
///
/// Times are integer seconds since 1970, so that the canonical form has integers only.
///
/// ```swift
/// let plaintext = try details.canonicalData()
/// let digest = TransactionDetails.digest(of: plaintext)   // base64url SHA-256
/// ```
public struct TransactionDetails: Codable, Sendable, Equatable {
    /// The version of this format without authorization details.
    public static let currentVersion: Int64 = 1
    /// The version of details that carry `authorizationDetails`. An authenticator that predates
    /// them refuses the version instead of ignoring the member: it would otherwise approve a
    /// payment whose amount and payee it never showed, though its signature covers them.
    public static let authorizationDetailsVersion: Int64 = 2
    /// The version of details whose verification offers alternatives
    /// (`Verification.alternatives`), with or without authorization details. An authenticator
    /// that predates them refuses the version: it would answer with the one factor it knows,
    /// which the server would refuse after the user had gone through it.
    public static let alternativesVersion: Int64 = 3

    /// The version that details with these members must carry.
    static func version(alternatives: Bool, authorizationDetails: Bool) -> Int64 {
        alternatives ? alternativesVersion : authorizationDetails ? authorizationDetailsVersion : currentVersion
    }

    public struct Party: Codable, Sendable, Equatable {
        public var id: String
        public var name: String

        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// Where the relying party's request came from, as the server saw it.
    public struct Context: Codable, Sendable, Equatable {
        public var ipAddress: String?
        public var userAgent: String?

        public init(ipAddress: String?, userAgent: String?) {
            self.ipAddress = ipAddress
            self.userAgent = userAgent
        }

        enum CodingKeys: String, CodingKey {
            case ipAddress = "ip_address"
            case userAgent = "user_agent"
        }
    }

    public var version: Int64
    /// The request's id in the device protocol (`txn_…`); not the relying party's `auth_req_id`.
    public var requestID: String
    /// The tenant's slug.
    public var tenant: String
    /// The user the request is for (`name` is the username).
    public var user: Party
    /// The relying party (`name` is its display name).
    public var client: Party
    /// Shown verbatim on both screens, when the relying party sent one.
    public var bindingMessage: String?
    public var scope: [String]
    public var acrValues: [String]?
    public var context: Context
    public var requestedAt: Int64
    public var expiresAt: Int64
    /// 256 random bits chosen by the server; the signed answer must repeat it.
    public var challenge: String
    /// What the user must do to approve; absent means a confirmation (`Factor.confirm`).
    public var verification: Verification?
    /// The relying party's RFC 9396 `authorization_details`, checked against the tenant's types:
    /// JSON objects, each with a string `type` (a payment's amount, currency and payee, say).
    /// The device shows them and signs them with everything else; absent when none were sent.
    public var authorizationDetails: [JSONValue]?
    /// The tenant's risk rules that fired for this request, each with why ("new network:
    /// 203.0.113.0/24"): what made it ask for more, shown so that the user knows why. Absent when
    /// none fired. Informative: an authenticator that does not know the member approves as before.
    public var risk: [Risk]?

    /// A risk rule that fired: its name, and its reason in words.
    public struct Risk: Codable, Sendable, Equatable {
        public var rule: String
        public var reason: String

        public init(rule: String, reason: String) {
            self.rule = rule
            self.reason = reason
        }
    }

    /// What the user must do to approve. Either one factor, with whether a PIN may stand in for
    /// it, or (from version 3) the tenant's alternatives: each an ordered list of factors, any
    /// one of which approves. For number matching, the choices to offer; the number itself is
    /// never here: the relying party shows it, and the user carries it across.
    public struct Verification: Codable, Sendable, Equatable {
        /// The class's factor: with no alternatives, the one the answer must use.
        public var factor: Factor
        /// For `biometric` and `custom` without alternatives: whether a PIN is accepted instead.
        public var pinFallback: Bool?
        /// When any alternative (or the factor) is `numberMatch`.
        public var numberMatch: NumberMatch?
        /// The ways to approve, in the policy's order, each the factors' raw values in the order
        /// the user goes through them. An answer names the one it used (`ApprovalResponse.alternative`).
        /// Strings rather than `Factor`s, so that an authenticator passes over an alternative
        /// with a factor it does not know and can still use the others.
        public var alternatives: [[String]]?

        public init(factor: Factor, pinFallback: Bool? = nil, numberMatch: NumberMatch? = nil, alternatives: [[Factor]]? = nil) {
            self.factor = factor
            self.pinFallback = pinFallback
            self.numberMatch = numberMatch
            self.alternatives = alternatives?.map { $0.map(\.rawValue) }
        }

        /// The alternatives an answer may satisfy, in order: the sealed ones, else the factor
        /// alone and, where the PIN may stand in, the PIN alone. An alternative naming a factor
        /// this version does not know is nil, so that indexes stay those of the sealed list.
        public var offered: [[Factor]?] {
            if let alternatives {
                return alternatives.map { names in
                    let factors = names.compactMap(Factor.init(rawValue:))
                    return factors.count == names.count ? factors : nil
                }
            }
            let fallback = pinFallback == true && (factor == .biometric || factor == .custom)
            return [[factor]] + (fallback ? [[.pin]] : [])
        }

        enum CodingKeys: String, CodingKey {
            case factor, alternatives
            case pinFallback = "pin_fallback"
            case numberMatch = "number_match"
        }
    }

    public init(
        requestID: String, tenant: String, user: Party, client: Party, bindingMessage: String?, scope: [String],
        acrValues: [String]?, context: Context, requestedAt: Int64, expiresAt: Int64, challenge: String,
        verification: Verification? = nil, authorizationDetails: [JSONValue]? = nil, risk: [Risk]? = nil
    ) {
        self.version = Self.version(
            alternatives: verification?.alternatives != nil, authorizationDetails: authorizationDetails != nil)
        self.requestID = requestID
        self.tenant = tenant
        self.user = user
        self.client = client
        self.bindingMessage = bindingMessage
        self.scope = scope
        self.acrValues = acrValues
        self.context = context
        self.requestedAt = requestedAt
        self.expiresAt = expiresAt
        self.challenge = challenge
        self.verification = verification
        self.authorizationDetails = authorizationDetails
        self.risk = risk
    }

    enum CodingKeys: String, CodingKey {
        case tenant, user, client, scope, context, challenge, verification, risk
        case version = "v"
        case requestID = "request_id"
        case bindingMessage = "binding_message"
        case acrValues = "acr_values"
        case requestedAt = "requested_at"
        case expiresAt = "expires_at"
        case authorizationDetails = "authorization_details"
    }

    /// The canonical JSON bytes: what is sealed, shown and digested.
    public func canonicalData() throws -> Data {
        try JSONValue(encoding: self).canonicalData
    }

    /// The base64url SHA-256 of the canonical bytes, as signed in `ApprovalResponse.detailsDigest`.
    public static func digest(of canonicalBytes: Data) -> String {
        Data(SHA256.hash(data: canonicalBytes)).base64URLEncodedString
    }

    /// Parses bytes a device opened. They must be the canonical form of a version-1 details
    /// object, version 2 with authorization details, or version 3 with alternatives, since the
    /// digest is taken over them exactly as received.
    public init(canonicalBytes: Data) throws(ApprovalMessageError) {
        // One strict parse (which refuses a member named twice), one comparison with the
        // canonical form, then the members are read from the same bytes.
        guard let value = try? JSONValue(parsing: canonicalBytes), case .object = value else {
            throw .malformed("the request details are not a JSON object")
        }
        guard value.canonicalData == canonicalBytes else {
            throw .malformed("the request details are not in canonical form")
        }
        guard let details = try? JSONDecoder().decode(TransactionDetails.self, from: canonicalBytes) else {
            throw .malformed("the request details lack a required member")
        }
        let expected = Self.version(
            alternatives: details.verification?.alternatives != nil, authorizationDetails: details.authorizationDetails != nil)
        guard details.version == expected else {
            throw .unsupportedVersion(details.version)
        }
        self = details
    }
}

/// Why a message of the approval protocol was refused.
public enum ApprovalMessageError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed(String)
    case unsupportedVersion(Int64)
    case cannotOpen

    public var description: String {
        switch self {
        case .malformed(let why): why
        case .unsupportedVersion(let version): "version \(version) of the request details is not supported"
        case .cannotOpen: "the sealed details could not be opened with this device's key"
        }
    }
}
