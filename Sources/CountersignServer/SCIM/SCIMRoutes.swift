import CountersignCore
import CountersignSCIM
import Foundation
import Hummingbird

/// SCIM 2.0 (RFC 7643, RFC 7644) below each tenant's base: `/scim/v2` for the default tenant,
/// `/t/<slug>/scim/v2` for the others, where an identity provider (Entra ID, Okta, Google)
/// provisions the tenant's users and groups. A provisioning client authenticates with an admin
/// key that holds `scim` and reaches the tenant. Answers are `application/scim+json`; failures
/// are SCIM error documents.
struct SCIMRoutes: Sendable {
    let store: SCIMStore
    let guardian: AdminGuard
    let maximumBodySize: Int
    let now: @Sendable () -> Date

    /// The most resources one list answers (ServiceProviderConfig's `filter.maxResults`).
    static let maximumResults = 200
    static let mediaType = "application/scim+json"

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        // Discovery: readable without a key (RFC 7644 §4 leaves it to the provider; they say
        // nothing about the tenant's data), GET only.
        router.get("/ServiceProviderConfig") { _, context in
            Self.response(try discovery(context).serviceProviderConfig)
        }
        router.get("/ResourceTypes") { _, context in Self.response(try discovery(context).resourceTypeList) }
        router.get("/ResourceTypes/{id}") { _, context in
            let id = try context.parameters.require("id")
            guard let type = try discovery(context).resourceTypes.first(where: { $0[caseInsensitive: "id"]?.stringValue == id })
            else { throw SCIMRefusal.notFound("No resource type is named \(id).") }
            return Self.response(type)
        }
        router.get("/Schemas") { _, context in Self.response(try discovery(context).schemaList) }
        router.get("/Schemas/{id}") { _, context in
            let id = try context.parameters.require("id")
            guard let schema = try discovery(context).schemas.first(where: { $0[caseInsensitive: "id"]?.stringValue == id })
            else { throw SCIMRefusal.notFound("No schema has the id \(id).") }
            return Self.response(schema)
        }

        // Both at once (RFC 7644 §3.4.3): the users, then the groups, paged as one list.
        router.post("/.search") { request, context in
            let tenant = try await authorize(request, context)
            let query = try SCIMQuery(searchRequest: try await body(request), maximumCount: Self.maximumResults)
            return try await searchAll(query, tenant: tenant, base: try base(context))
        }

        // Users.
        router.get("/Users") { request, context in
            let tenant = try await authorize(request, context)
            return try await listUsers(try Self.query(request), tenant: tenant, base: try base(context))
        }
        router.post("/Users/.search") { request, context in
            let tenant = try await authorize(request, context)
            let query = try SCIMQuery(searchRequest: try await body(request), maximumCount: Self.maximumResults)
            return try await listUsers(query, tenant: tenant, base: try base(context))
        }
        router.post("/Users") { request, context in
            let tenant = try await authorize(request, context)
            let user = try await store.create(
                try SCIMUser(decoding: try await body(request)), tenantID: tenant.id, actor: try await actor(request),
                at: now())
            return Self.response(user.json(baseURL: try base(context)), status: .created, version: user.meta?.entityTag)
        }
        router.get("/Users/{id}") { request, context in
            let tenant = try await authorize(request, context)
            let (_, user) = try await store.user(id: try context.parameters.require("id"), tenantID: tenant.id)
            let projection = try Self.query(request).projection
            return Self.response(projection.apply(to: user.json(baseURL: try base(context)), schema: .user),
                                 version: user.meta?.entityTag)
        }
        router.put("/Users/{id}") { request, context in
            let tenant = try await authorize(request, context)
            let user = try await store.replace(
                id: try context.parameters.require("id"), with: try SCIMUser(decoding: try await body(request)),
                tenantID: tenant.id, ifMatch: request.headers[.ifMatch], actor: try await actor(request), at: now())
            return Self.response(user.json(baseURL: try base(context)), version: user.meta?.entityTag)
        }
        router.patch("/Users/{id}") { request, context in
            let tenant = try await authorize(request, context)
            let patch = try SCIMPatchRequest(parsing: try await body(request))
            let (_, current) = try await store.user(id: try context.parameters.require("id"), tenantID: tenant.id)
            let user = try await store.replace(
                id: try context.parameters.require("id"), with: try current.applying(patch), tenantID: tenant.id,
                ifMatch: request.headers[.ifMatch], actor: try await actor(request), at: now())
            return Self.response(user.json(baseURL: try base(context)), version: user.meta?.entityTag)
        }
        router.delete("/Users/{id}") { request, context in
            let tenant = try await authorize(request, context)
            try await store.delete(id: try context.parameters.require("id"), tenantID: tenant.id,
                                   ifMatch: request.headers[.ifMatch], actor: try await actor(request), at: now())
            return Response(status: .noContent)
        }

        // Groups.
        router.get("/Groups") { request, context in
            let tenant = try await authorize(request, context)
            return try await listGroups(try Self.query(request), tenant: tenant, base: try base(context))
        }
        router.post("/Groups/.search") { request, context in
            let tenant = try await authorize(request, context)
            let query = try SCIMQuery(searchRequest: try await body(request), maximumCount: Self.maximumResults)
            return try await listGroups(query, tenant: tenant, base: try base(context))
        }
        router.post("/Groups") { request, context in
            let tenant = try await authorize(request, context)
            let group = try await store.create(
                try SCIMGroup(decoding: try await body(request)), tenantID: tenant.id, actor: try await actor(request),
                at: now())
            return Self.response(group.json(baseURL: try base(context)), status: .created, version: group.meta?.entityTag)
        }
        router.get("/Groups/{id}") { request, context in
            let tenant = try await authorize(request, context)
            let projection = try Self.query(request).projection
            let (_, group) = try await store.group(
                id: try context.parameters.require("id"), tenantID: tenant.id, withMembers: !projection.excludes("members"))
            return Self.response(projection.apply(to: group.json(baseURL: try base(context)), schema: .group),
                                 version: group.meta?.entityTag)
        }
        router.put("/Groups/{id}") { request, context in
            let tenant = try await authorize(request, context)
            let group = try await store.update(
                id: try context.parameters.require("id"), to: try SCIMGroup(decoding: try await body(request)),
                changes: nil, tenantID: tenant.id, ifMatch: request.headers[.ifMatch], actor: try await actor(request),
                at: now())
            return Self.response(group.json(baseURL: try base(context)), version: group.meta?.entityTag)
        }
        router.patch("/Groups/{id}") { request, context in
            let tenant = try await authorize(request, context)
            let patch = try SCIMPatchRequest(parsing: try await body(request))
            let (_, current) = try await store.group(id: try context.parameters.require("id"), tenantID: tenant.id)
            let applied = try current.applying(patch)
            let group = try await store.update(
                id: try context.parameters.require("id"), to: applied.group, changes: applied.members, tenantID: tenant.id,
                ifMatch: request.headers[.ifMatch], actor: try await actor(request), at: now())
            return Self.response(group.json(baseURL: try base(context)), version: group.meta?.entityTag)
        }
        router.delete("/Groups/{id}") { request, context in
            let tenant = try await authorize(request, context)
            try await store.delete(groupID: try context.parameters.require("id"), tenantID: tenant.id,
                                   ifMatch: request.headers[.ifMatch], actor: try await actor(request), at: now())
            return Response(status: .noContent)
        }
    }

    private func listUsers(_ query: SCIMQuery, tenant: Tenant, base: String) async throws -> Response {
        let (total, resources) = try await users(query, match: try Self.userMatch(query.filter), offset: query.page.offset,
                                                 limit: query.page.count, tenant: tenant, base: base)
        return Self.response(SCIMListResponse(totalResults: total, page: query.page, resources: resources).json)
    }

    private func listGroups(_ query: SCIMQuery, tenant: Tenant, base: String) async throws -> Response {
        let (total, resources) = try await groups(query, match: try Self.groupMatch(query.filter), offset: query.page.offset,
                                                  limit: query.page.count, tenant: tenant, base: base)
        return Self.response(SCIMListResponse(totalResults: total, page: query.page, resources: resources).json)
    }

    /// Users and groups in one list: each kind whose attributes the filter names, users first.
    private func searchAll(_ query: SCIMQuery, tenant: Tenant, base: String) async throws -> Response {
        // Each kind is asked when the filter is one it can answer (`try?` would flatten the
        // "every one" nil into "cannot answer").
        let userMatch = Result { () throws(SCIMError) in try Self.userMatch(query.filter) }
        let groupMatch = Result { () throws(SCIMError) in try Self.groupMatch(query.filter) }
        if case .failure(let error) = userMatch, case .failure = groupMatch {
            throw error  // neither can: the users' refusal says why
        }
        var total = 0
        var resources: [SCIMJSON] = []
        if case .success(let userMatch) = userMatch {
            let found = try await users(query, match: userMatch, offset: query.page.offset, limit: query.page.count,
                                        tenant: tenant, base: base)
            total += found.total
            resources += found.resources
        }
        if case .success(let groupMatch) = groupMatch {
            let skipped = max(0, query.page.offset - total)
            let found = try await groups(query, match: groupMatch, offset: skipped,
                                         limit: max(0, query.page.count - resources.count), tenant: tenant, base: base)
            total += found.total
            resources += found.resources
        }
        return Self.response(SCIMListResponse(totalResults: total, page: query.page, resources: resources).json)
    }

    private func users(_ query: SCIMQuery, match: UserMatch?, offset: Int, limit: Int, tenant: Tenant,
                       base: String) async throws -> (total: Int, resources: [SCIMJSON]) {
        let (total, users) = try await store.users(
            tenantID: tenant.id, matching: match, offset: offset, limit: limit,
            withGroups: !query.projection.excludes("groups"))
        return (total, users.map { query.projection.apply(to: $0.json(baseURL: base), schema: .user) })
    }

    private func groups(_ query: SCIMQuery, match: GroupMatch?, offset: Int, limit: Int, tenant: Tenant,
                        base: String) async throws -> (total: Int, resources: [SCIMJSON]) {
        let (total, groups) = try await store.groups(
            tenantID: tenant.id, matching: match, offset: offset, limit: limit,
            withMembers: !query.projection.excludes("members"))
        return (total, groups.map { query.projection.apply(to: $0.json(baseURL: base), schema: .group) })
    }

    /// What storage is asked for a users' filter (nil: every user).
    static func userMatch(_ filter: SCIMFilter?) throws(SCIMError) -> UserMatch? {
        switch try SCIMStoreQuery(users: filter) {
        case .all: nil
        case .id(let id): .id(id)
        case .userName(let name): .username(name)
        case .externalId(let id): .externalID(id)
        case .emailValue(let address): .email(address)
        case .displayName(let name): .displayName(name)
        }
    }

    /// What storage is asked for a groups' filter (nil: every group).
    static func groupMatch(_ filter: SCIMFilter?) throws(SCIMError) -> GroupMatch? {
        switch try SCIMStoreQuery(groups: filter) {
        case .all: nil
        case .id(let id): .id(id)
        case .displayName(let name): .name(name)
        case .externalId(let id): .externalID(id)
        case .userName, .emailValue: throw .invalidFilter(offset: 0, reason: "groups have no userName or emails")
        }
    }

    /// The request's tenant, once the key holds `scim` and reaches it.
    private func authorize(_ request: Request, _ context: CountersignRequestContext) async throws -> Tenant {
        let key = try await guardian.key(request, holding: .scim)
        let tenant = try context.tenantIssuer().tenant
        guard key.reaches(tenantID: tenant.id) else { throw AdminError.wrongTenant }
        return tenant
    }

    private func actor(_ request: Request) async throws -> String {
        "admin-key:\(try await guardian.key(request).id)"
    }

    private func base(_ context: CountersignRequestContext) throws -> String {
        try context.tenantIssuer().identifier + "/scim/v2"
    }

    private func discovery(_ context: CountersignRequestContext) throws -> SCIMDiscovery {
        SCIMDiscovery(baseURL: try base(context), maximumResults: Self.maximumResults)
    }

    private func body(_ request: Request) async throws -> Data {
        // SCIM's own media type (RFC 7644 §3.1), and plain JSON, which clients also send.
        try await request.bodyData(limit: maximumBodySize, mediaTypes: [Self.mediaType, "application/json"])
    }

    static func query(_ request: Request) throws -> SCIMQuery {
        let parameters = try queryParameters(request.uri.query ?? "")
        return try SCIMQuery(
            filter: parameters["filter"], startIndex: parameters["startIndex"], count: parameters["count"],
            attributes: parameters["attributes"], excludedAttributes: parameters["excludedAttributes"],
            maximumCount: maximumResults)
    }

    /// The query string read as a form (a `+` is a space, as clients that encode a filter's
    /// spaces that way mean it), each of SCIM's parameters at most once.
    static func queryParameters(_ query: String) throws(SCIMError) -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) throws(SCIMError) -> String {
                guard let value = text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
                    throw .invalidValue("The query string is not percent-encoded UTF-8.")
                }
                return value
            }
            let name = try decoded(parts[0])
            guard ["filter", "startIndex", "count", "attributes", "excludedAttributes"].contains(name) else { continue }
            guard parameters[name] == nil else { throw .invalidValue("The query parameter \(name) is given more than once.") }
            parameters[name] = try decoded(parts.count > 1 ? parts[1] : "")
        }
        return parameters
    }

    static func response(_ json: SCIMJSON, status: HTTPResponse.Status = .ok, version: String? = nil) -> Response {
        var headers: HTTPFields = [.contentType: mediaType, .cacheControl: "no-store"]
        if let version { headers[.eTag] = version }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: json.serialized)))
    }
}
