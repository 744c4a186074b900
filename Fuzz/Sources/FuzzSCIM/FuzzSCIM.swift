import CountersignSCIM
import Foundation
import LibFuzzerDriver

/// Hands the command line to libFuzzer, which then calls `fuzzSCIM` once per input.
@main enum FuzzSCIM {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzSCIM))
    }
}

let base = "https://id.example.com/scim/v2"
let user = SCIMUser(id: "u1", externalId: "ext", userName: "bjensen", name: SCIMName(formatted: "B J", familyName: "J", givenName: "B"),
                    displayName: "Babs", emails: [SCIMEmail(value: "b@example.com", type: "work", primary: true)],
                    groups: [SCIMGroupReference(value: "g1")],
                    meta: SCIMMeta(created: Date(timeIntervalSince1970: 0), lastModified: Date(timeIntervalSince1970: 0), version: "1"))
let group = SCIMGroup(id: "g1", displayName: "Sales", members: [SCIMMember(value: "u1"), SCIMMember(value: "u2", display: "Bob")])

/// One input, read both ways a client sends SCIM text: as a filter or PATCH path (a query
/// parameter, so any bytes, repaired to UTF-8 as a URL decoder would), and as a JSON body (a
/// PatchOp request, a search request, a user, a group). Reading never traps; a filter or path
/// that reads prints as text that reads back to the same one; evaluating and reducing a filter,
/// and applying a patch, never trap; a user or group that reads writes JSON that reads back to
/// the same resource.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzSCIM(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    if let filter = try? SCIMFilter(parsing: text) {
        guard (try? SCIMFilter(parsing: filter.description)) == filter else {
            fatalError("a filter's printed form does not read back as the filter")
        }
        _ = filter.matches(user.json(baseURL: base), schema: .user)
        _ = filter.matches(group.json(baseURL: base), schema: .group)
        _ = try? SCIMStoreQuery(users: filter)
        _ = try? SCIMStoreQuery(groups: filter)
    }
    if let path = try? SCIMPatchPath(parsing: text) {
        guard (try? SCIMPatchPath(parsing: path.description)) == path else {
            fatalError("a PATCH path's printed form does not read back as the path")
        }
    }
    if let patch = try? SCIMPatchRequest(parsing: bytes) {
        _ = try? user.applying(patch)
        _ = try? group.applying(patch)
    }
    _ = try? SCIMQuery(searchRequest: bytes, maximumCount: 200)
    if let decoded = try? SCIMUser(decoding: bytes) {
        guard (try? SCIMUser(decoding: decoded.json(baseURL: base).serialized)) == decoded else {
            fatalError("a user's JSON does not read back as the user")
        }
    }
    if let decoded = try? SCIMGroup(decoding: bytes) {
        guard (try? SCIMGroup(decoding: decoded.json(baseURL: base).serialized)) == decoded else {
            fatalError("a group's JSON does not read back as the group")
        }
    }
    return 0
}
