import CountersignCore
import Foundation

/// JSON request bodies. The protocol's messages are strings and enums, which always encode; a
/// failure is still reported rather than an empty body sent.
enum JSONBody {
    static func encode(_ value: some Encodable) throws(CountersignError) -> Data {
        do { return try Timestamps.encoder().encode(value) } catch {
            throw .invalidRequest("the request body could not be encoded")
        }
    }
}
