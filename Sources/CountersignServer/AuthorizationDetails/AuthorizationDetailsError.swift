/// Why `authorization_details` was refused; every case is `invalid_authorization_details`
/// (RFC 9396 §5), with a description naming the element and the field at fault.
enum AuthorizationDetailsError: OAuthFailure, Equatable {
    case tooLarge(limit: Int)
    case notJSON(String)
    case notArray
    case empty
    case elementNotObject(index: Int)
    case missingType(index: Int)
    case unknownType(index: Int, String)
    case typeNotAllowed(index: Int, String)
    case fieldNotAllowed(index: Int, path: String)
    case missingField(index: Int, path: String)
    case invalidField(index: Int, path: String, String)

    var oauthError: OAuthError {
        OAuthError(.invalidAuthorizationDetails, description)
    }

    private var description: String {
        switch self {
        case .tooLarge(let limit): "authorization_details is longer than \(limit) bytes"
        case .notJSON(let why): "authorization_details is not JSON: \(why)"
        case .notArray: "authorization_details must be a JSON array of objects"
        case .empty: "authorization_details holds no element"
        case .elementNotObject(let index): "\(Self.element(index)) must be a JSON object"
        case .missingType(let index): "\(Self.element(index)).type is required and must be a string"
        case .unknownType(let index, let type): "\(Self.element(index)).type \(type) is not a type of this server"
        case .typeNotAllowed(let index, let type): "\(Self.element(index)).type \(type) is not registered for this client"
        case .fieldNotAllowed(let index, let path): "\(Self.element(index)).\(path) is not a field of its type"
        case .missingField(let index, let path): "\(Self.element(index)).\(path) is required by its type"
        case .invalidField(let index, let path, let why): "\(Self.element(index)).\(path) \(why)"
        }
    }

    private static func element(_ index: Int) -> String { "authorization_details[\(index)]" }
}
