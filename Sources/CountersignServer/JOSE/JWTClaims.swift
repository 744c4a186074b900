import CountersignCore
import Foundation
import JWTKit

/// The claims of a client's JWT, read strictly: a registered claim of RFC 7519 §4.1 that is
/// present must have its registered type, or the JWT is refused rather than the claim ignored.
/// Dates are integer NumericDates.
struct JWTClaims: Sendable {
    private let members: [String: JSONValue]

    init(_ members: [String: JSONValue]) { self.members = members }

    subscript(name: String) -> JSONValue? { members[name] }

    func string(_ name: String) throws(JWTClaimError) -> String? {
        guard let value = members[name] else { return nil }
        guard let text = value.stringValue, !text.isEmpty else { throw .wrongType(name, "a non-empty string") }
        return text
    }

    func requiredString(_ name: String) throws(JWTClaimError) -> String {
        guard let text = try string(name) else { throw .missing(name) }
        return text
    }

    func date(_ name: String) throws(JWTClaimError) -> Date? {
        guard let value = members[name] else { return nil }
        guard let seconds = value.integerValue else { throw .wrongType(name, "an integer NumericDate") }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    func requiredDate(_ name: String) throws(JWTClaimError) -> Date {
        guard let date = try date(name) else { throw .missing(name) }
        return date
    }

    /// `aud`: one string or an array of strings (RFC 7519 §4.1.3).
    func audience() throws(JWTClaimError) -> [String] {
        switch members["aud"] {
        case nil: throw .missing("aud")
        case .string(let single)?: return [single]
        case .array(let values)? where !values.isEmpty && values.allSatisfy({ $0.stringValue != nil }):
            return values.compactMap(\.stringValue)
        default: throw .wrongType("aud", "a string or an array of strings")
        }
    }
}

/// To jwt-kit a claim set is the JSON object it is: the tenant's tokens are signed from one and
/// a client's JWT is verified as one. What the claims must hold is checked by each use, with its
/// own rules and the server's clock (`JWTTimeRules`), not by jwt-kit's `verify(using:)`.
extension JWTClaims: JWTPayload {
    init(from decoder: any Decoder) throws {
        self.init(try [String: JSONValue](from: decoder))
    }

    func encode(to encoder: any Encoder) throws {
        try members.encode(to: encoder)
    }

    func verify(using _: some JWTAlgorithm) {}
}

/// A claim that is missing or of the wrong type. The description continues the name of the
/// JWT: `client_assertion` + ` has no jti`.
enum JWTClaimError: Error, Sendable, Equatable, CustomStringConvertible {
    case missing(String)
    case wrongType(String, String)

    var description: String {
        switch self {
        case .missing(let name): " has no \(name)"
        case .wrongType(let name, let expected): "'s \(name) must be \(expected)"
        }
    }
}
