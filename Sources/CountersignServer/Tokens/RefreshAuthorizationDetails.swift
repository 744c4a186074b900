import CountersignCore
import Foundation

/// The authorization details of the tokens a refresh issues (RFC 9396 §6): without an
/// `authorization_details` parameter, those the user approved; with one, any of those elements,
/// never another. The user approved each element as it was shown to them — this payee, this
/// amount — so an element that differs in any member is not a narrower grant but a new one,
/// and is refused with `invalid_authorization_details`; the refresh token stays usable.
struct RefreshAuthorizationDetails: Sendable, Equatable {
    let details: AuthorizationDetails?

    init(_ raw: String?, granted: AuthorizationDetails?) throws(AuthorizationDetailsError) {
        guard let raw else {
            details = granted
            return
        }
        guard raw.utf8.count <= AuthorizationDetails.maximumSize else { throw .tooLarge(limit: AuthorizationDetails.maximumSize) }
        let value: JSONValue
        do { value = try JSONValue(parsing: Data(raw.utf8)) } catch {
            throw error.kind == .syntax ? .notJSON(error.reason) : .unsupportedJSON(path: error.path, error.reason)
        }
        guard case .array(let requested) = value else { throw .notArray }
        guard !requested.isEmpty else { throw .empty }
        guard let granted else { throw .noneGranted }
        var remaining = granted.elements
        for (index, element) in requested.enumerated() {
            guard case .object = element else { throw .elementNotObject(index: index) }
            // Each granted element may be asked for once: asking twice would not narrow anything.
            guard let match = remaining.firstIndex(of: element) else { throw .notGranted(index: index) }
            remaining.remove(at: match)
        }
        details = AuthorizationDetails(elements: requested)
    }
}
