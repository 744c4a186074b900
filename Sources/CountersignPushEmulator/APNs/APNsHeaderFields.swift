import Foundation

/// The header fields APNs reads, picked out of a request's header list in one pass, with
/// whether any name was repeated.
///
/// Every request of the benchmark goes through here, and string comparison was the largest
/// cost the emulator itself added to HTTP/2; so names are compared only when their lengths
/// agree, which on a typical request rules out almost every pair.
struct APNsHeaderFields: Sendable {
    var authorization: String?
    var topic: String?
    var pushType: String?
    var priority: String?
    var expiration: String?
    var collapseID: String?
    var id: String?
    /// A name appeared twice (APNs answers `DuplicateHeaders`).
    var hasDuplicates = false

    /// The first value of each field.
    init(_ headers: [(name: String, value: String)]) {
        for index in headers.indices {
            let (name, value) = headers[index]
            let length = name.utf8.count
            if headers[..<index].contains(where: { $0.name.utf8.count == length && $0.name == name }) {
                hasDuplicates = true
                continue
            }
            switch (length, name) {
            case (7, "apns-id"): id = value
            case (10, "apns-topic"): topic = value
            case (13, "authorization"): authorization = value
            case (13, "apns-priority"): priority = value
            case (14, "apns-push-type"): pushType = value
            case (15, "apns-expiration"): expiration = value
            case (16, "apns-collapse-id"): collapseID = value
            default: break
            }
        }
    }
}
