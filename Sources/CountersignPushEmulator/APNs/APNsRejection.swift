/// A built-in APNs refusal: the `reason` string Apple sends and the HTTP status it comes with.
///
/// The raw values are Apple's reason strings (from "Handling notification responses from
/// APNs"), so a sender's error mapping is tested against the words it will meet in production.
enum APNsRejection: String, Error, Sendable {
    case methodNotAllowed = "MethodNotAllowed"
    case badPath = "BadPath"
    case badDeviceToken = "BadDeviceToken"
    case missingProviderToken = "MissingProviderToken"
    case invalidProviderToken = "InvalidProviderToken"
    case expiredProviderToken = "ExpiredProviderToken"
    case tooManyProviderTokenUpdates = "TooManyProviderTokenUpdates"
    case duplicateHeaders = "DuplicateHeaders"
    case missingTopic = "MissingTopic"
    case invalidPushType = "InvalidPushType"
    case badPriority = "BadPriority"
    case badExpirationDate = "BadExpirationDate"
    case badCollapseID = "BadCollapseId"
    case badMessageID = "BadMessageId"
    case payloadEmpty = "PayloadEmpty"
    case payloadTooLarge = "PayloadTooLarge"
    /// Not one of Apple's reasons: Apple delivers a payload without `aps` and leaves the
    /// device to drop it. The emulator refuses it so that a sender building a wrong payload
    /// fails its tests instead of passing them.
    case badPayload = "BadPayload"

    var status: Int {
        switch self {
        case .methodNotAllowed: 405
        case .badPath: 404
        case .missingProviderToken, .invalidProviderToken, .expiredProviderToken: 403
        case .tooManyProviderTokenUpdates: 429
        case .payloadTooLarge: 413
        case .badDeviceToken, .duplicateHeaders, .missingTopic, .invalidPushType, .badPriority, .badExpirationDate,
             .badCollapseID, .badMessageID, .payloadEmpty, .badPayload: 400
        }
    }
}
