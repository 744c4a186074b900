/// Why `authorization_details` was refused; every case is `invalid_authorization_details`
/// (RFC 9396 §5), with a description naming the element and the field at fault.
enum AuthorizationDetailsError: OAuthFailure, Equatable {
    case tooLarge(limit: Int)
    case notJSON(String)
    /// Valid JSON that Countersign does not take: a number with a fraction or exponent, or past
    /// 64 bits, or a member named twice; `path` leads to it from the array.
    case unsupportedJSON(path: String, String)
    case notArray
    case empty
    case elementNotObject(index: Int)
    case missingType(index: Int)
    case unknownType(index: Int, String)
    case typeNotAllowed(index: Int, String)
    case fieldNotAllowed(index: Int, path: String)
    case missingField(index: Int, path: String)
    case invalidField(index: Int, path: String, String)
    /// A refresh asked for details its grant has none of (RFC 9396 §6.2).
    case noneGranted
    /// A refresh asked for an element that is not one the user approved (RFC 9396 §6.2).
    case notGranted(index: Int)

    var oauthError: OAuthError {
        OAuthError(.invalidAuthorizationDetails, description)
    }

    private var description: String {
        switch self {
        case .tooLarge(let limit): "authorization_details is longer than \(limit) bytes"
        case .notJSON(let why): "authorization_details is not JSON: \(why)"
        case .unsupportedJSON(let path, let why): "authorization_details\(path.hasPrefix("[") || path.isEmpty ? "" : ".")\(path): \(why)"
        case .notArray: "authorization_details must be a JSON array of objects"
        case .empty: "authorization_details holds no element"
        case .elementNotObject(let index): "\(Self.element(index)) must be a JSON object"
        case .missingType(let index): "\(Self.element(index)).type is required and must be a string"
        case .unknownType(let index, let type): "\(Self.element(index)).type \(type) is not a type of this server"
        case .typeNotAllowed(let index, let type): "\(Self.element(index)).type \(type) is not registered for this client"
        case .fieldNotAllowed(let index, let path): "\(Self.element(index)).\(path) is not a field of its type"
        case .missingField(let index, let path): "\(Self.element(index)).\(path) is required by its type"
        case .invalidField(let index, let path, let why): "\(Self.element(index)).\(path) \(why)"
        case .noneGranted: "the grant of this refresh token has no authorization details"
        case .notGranted(let index): "\(Self.element(index)) is not one of the authorization details this grant holds"
        }
    }

    private static func element(_ index: Int) -> String { "authorization_details[\(index)]" }
}
