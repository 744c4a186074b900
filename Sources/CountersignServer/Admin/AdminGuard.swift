import Foundation
import CountersignCore
import Hummingbird

/// The checks in front of every administration call: a valid key (401), the right (403), a
/// tenant the key reaches (403) and that exists (404).
struct AdminGuard: Sendable {
    let authenticator: AdminAuthenticator
    /// Resolves the tenant a path names; the same cache the tenant middleware answers from, so a
    /// rename made here is seen there at once.
    let tenants: TenantService
    let now: @Sendable () -> Date

    func key(_ request: Request) async throws -> AdminKey {
        try await authenticator.authenticate(authorization: request.headers[.authorization], at: now())
    }

    /// The key, checked for `right`.
    func key(_ request: Request, holding right: AdminRight) async throws -> AdminKey {
        let key = try await key(request)
        guard key.holds(right) else { throw AdminError.missingRight(right) }
        return key
    }

    /// A system key (one that belongs to no tenant) holding `right`.
    func systemKey(_ request: Request, holding right: AdminRight) async throws -> AdminKey {
        let key = try await key(request, holding: right)
        guard key.tenantID == nil else { throw AdminError.wrongTenant }
        return key
    }

    /// The key and the tenant named by the path, checked for `right`.
    func tenant(_ request: Request, _ context: CountersignRequestContext, holding right: AdminRight)
        async throws -> (AdminKey, Tenant) {
        let key = try await key(request, holding: right)
        let slug = try context.parameters.require("tenant")
        let tenant = try await tenants.resolve(adminPath: slug)
        if let tenant, key.reaches(tenantID: tenant.id) { return (key, tenant) }
        // A tenant key learns nothing about other tenants, not even whether they exist.
        if key.tenantID != nil { throw AdminError.wrongTenant }
        throw AdminError.notFound("tenant \(slug)")
    }
}

/// `?limit=&cursor=` on every list: at most 200 per page, 50 by default; the cursor is the
/// `next_cursor` of the previous page.
struct PageRequest: Sendable {
    let limit: Int
    let cursor: String?

    init(_ request: Request) throws(APIError) {
        let query = request.uri.queryParameters
        for name in ["limit", "cursor"] where query.getAll(name).count > 1 {
            throw .badRequest("query parameter \(name) is given more than once")
        }
        if let text = query["limit"] {
            guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), text.utf8.first != 0x30,
                  let limit = Int(String(text)), (1...200).contains(limit) else {
                throw .badRequest("limit must be a whole number from 1 to 200")
            }
            self.limit = limit
        } else {
            self.limit = 50
        }
        if let cursor = query["cursor"].map(String.init) {
            guard !cursor.isEmpty, cursor.count <= 64,
                  cursor.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
                throw .badRequest("cursor is not a cursor this server issued")
            }
            self.cursor = cursor
        } else {
            self.cursor = nil
        }
    }

    /// Repositories are asked for one more than the page holds, to know whether more follow.
    var fetchLimit: Int { limit + 1 }

    func page<Item: Encodable & Sendable>(_ fetched: [Item], cursor: (Item) -> String) -> Page<Item> {
        let items = Array(fetched.prefix(limit))
        return Page(items: items, nextCursor: fetched.count > limit ? items.last.map(cursor) : nil)
    }
}

struct Page<Item: Encodable & Sendable>: Encodable, Sendable {
    let items: [Item]
    let nextCursor: String?

    enum CodingKeys: String, CodingKey {
        case items
        case nextCursor = "next_cursor"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}

extension AdminError: APIFailure {
    var wireError: WireError {
        var error = apiError.wireError
        error.credentialsAbsent = self == .missingCredentials
        return error
    }
}

extension EnrollmentError: APIFailure {}

/// Field rules shared by the administration endpoints (and the command line, which issues keys
/// directly in `recover-admin-key`).
public enum AdminFields {
    /// A display name: trimmed, 1–100 characters, none that `NameCharacters` refuses (control
    /// characters, bidirectional overrides): names are shown in lists, where one could pass for
    /// another.
    public static func name(_ raw: String, field: String = "name") throws(AdminError) -> String {
        let value = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...100).contains(value.count), !NameCharacters.refuses(value) else {
            throw .invalidField(field, "1 to 100 characters without control or format characters (such as bidirectional overrides)")
        }
        return value
    }

    static func optionalName(_ raw: String?, field: String) throws(AdminError) -> String? {
        guard let raw else { return nil }
        return try name(raw, field: field)
    }
}
