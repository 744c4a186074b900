import CountersignCore
import Foundation
import Hummingbird

/// The OpenID Shared Signals Framework 1.0 transmitter's HTTP face, below each tenant's issuer:
/// `/ssf/streams` (the configuration endpoint: POST, GET, PATCH, PUT, DELETE), `/ssf/status`
/// (GET, POST), `/ssf/verify` (POST) and `/ssf/poll/{stream}` (RFC 8936). A receiver
/// authenticates with an admin key of the tenant holding `ssf` (`Authorization: Bearer`), and
/// reaches only the streams that key created. The transmitter's metadata is public, at
/// `/.well-known/ssf-configuration` for the default tenant and at
/// `/.well-known/ssf-configuration/t/<slug>` for the others (SSF §7.2: the well-known segment
/// goes between the host and the issuer's path).
struct SharedSignalsRoutes: Sendable {
    let streams: EventStreams
    let guardian: AdminGuard
    let maximumBodySize: Int

    /// The transmitter configuration metadata (SSF §7.1).
    struct Metadata: Encodable, Sendable {
        struct AuthorizationScheme: Encodable, Sendable {
            let specURN: String
            enum CodingKeys: String, CodingKey { case specURN = "spec_urn" }
        }

        let specVersion = "1_0"
        let issuer: String
        let jwksURI: String
        let deliveryMethodsSupported = [EventStream.DeliveryMethod.push.rawValue, EventStream.DeliveryMethod.poll.rawValue]
        let configurationEndpoint: String
        let statusEndpoint: String
        let verificationEndpoint: String
        /// Bearer tokens (RFC 6750): the receiver's admin key.
        let authorizationSchemes = [AuthorizationScheme(specURN: "urn:ietf:rfc:6750")]
        /// Every user of the tenant is a subject of every stream.
        let defaultSubjects = "ALL"

        init(_ issuer: Issuer) {
            self.issuer = issuer.identifier
            jwksURI = issuer.identifier + "/jwks"
            configurationEndpoint = issuer.identifier + "/ssf/streams"
            statusEndpoint = issuer.identifier + "/ssf/status"
            verificationEndpoint = issuer.identifier + "/ssf/verify"
        }

        enum CodingKeys: String, CodingKey {
            case specVersion = "spec_version"
            case issuer
            case jwksURI = "jwks_uri"
            case deliveryMethodsSupported = "delivery_methods_supported"
            case configurationEndpoint = "configuration_endpoint"
            case statusEndpoint = "status_endpoint"
            case verificationEndpoint = "verification_endpoint"
            case authorizationSchemes = "authorization_schemes"
            case defaultSubjects = "default_subjects"
        }
    }

    /// `/.well-known/ssf-configuration` and `/.well-known/ssf-configuration/t/{tenant}`.
    func registerMetadata(on routes: some RouterMethods<CountersignRequestContext>) {
        routes.get("/.well-known/ssf-configuration") { _, context in try Self.metadata(context) }
        routes.get("/.well-known/ssf-configuration/t/{tenant}") { _, context in try Self.metadata(context) }
    }

    private static func metadata(_ context: CountersignRequestContext) throws -> Response {
        let issuer = try context.tenantIssuer()
        if context.parameters.get("tenant") != nil, issuer.tenant.isDefault {
            throw APIError.notFound(
                "the default tenant's issuer is \(issuer.identifier); its metadata is at \(issuer.identifier)/.well-known/ssf-configuration")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=300"],
            body: .init(byteBuffer: ByteBuffer(data: try JSON.encode(Metadata(issuer)))))
    }

    /// The management and poll endpoints, on the tenant's `/ssf` group.
    func register(on routes: some RouterMethods<CountersignRequestContext>) {
        routes.post("/streams") { request, context in
            let (key, issuer) = try await receiver(request, context)
            let stream = try await streams.create(
                try StreamConfigurationRequest(try await body(request)), key: key, issuer: issuer)
            return try JSON.response(streams.configuration(of: stream, issuer: issuer), status: .created)
        }
        routes.get("/streams") { request, context in
            let (key, issuer) = try await receiver(request, context)
            if let id = try Self.streamID(request, required: false) {
                return try JSON.response(streams.configuration(of: try await streams.stream(id, key: key, issuer: issuer),
                                                               issuer: issuer))
            }
            // Without stream_id: every stream of the receiver, as an array (SSF §8.1.1.2).
            return try JSON.response(try await streams.list(key: key, issuer: issuer).map {
                streams.configuration(of: $0, issuer: issuer)
            })
        }
        routes.patch("/streams") { request, context in
            try await update(request, context, replace: false)
        }
        routes.put("/streams") { request, context in
            try await update(request, context, replace: true)
        }
        routes.delete("/streams") { request, context in
            let (key, issuer) = try await receiver(request, context)
            try await streams.delete(try Self.streamID(request, required: true)!, key: key, issuer: issuer)
            return Response(status: .noContent)
        }

        routes.get("/status") { request, context in
            let (key, issuer) = try await receiver(request, context)
            let stream = try await streams.stream(try Self.streamID(request, required: true)!, key: key, issuer: issuer)
            return try JSON.response(Self.status(stream))
        }
        routes.post("/status") { request, context in
            let (key, issuer) = try await receiver(request, context)
            let members = try Self.object(try await body(request))
            guard let id = members["stream_id"]?.stringValue else { throw AdminError.missingField("stream_id") }
            guard let raw = members["status"] else { throw AdminError.missingField("status") }
            guard let status = raw.stringValue.flatMap(EventStream.Status.init(rawValue:)) else {
                throw AdminError.invalidField("status", "must be enabled, paused or disabled")
            }
            var reason: String?
            if let given = members["reason"], given != .null {
                guard let text = given.stringValue else { throw AdminError.invalidField("reason", "must be a string") }
                reason = text
            }
            let stream = try await streams.setStatus(id, to: status, reason: reason, key: key, issuer: issuer)
            return try JSON.response(Self.status(stream))
        }

        routes.post("/verify") { request, context in
            let (key, issuer) = try await receiver(request, context)
            let members = try Self.object(try await body(request))
            guard let id = members["stream_id"]?.stringValue else { throw AdminError.missingField("stream_id") }
            var state: String?
            if let given = members["state"], given != .null {
                guard let text = given.stringValue, text.utf8.count <= 1024 else {
                    throw AdminError.invalidField("state", "must be a string of at most 1024 bytes")
                }
                state = text
            }
            try await streams.verify(id, state: state, key: key, issuer: issuer)
            return Response(status: .noContent)
        }

        routes.post("/poll/{stream}") { request, context in
            let (key, issuer) = try await receiver(request, context)
            let id = try context.parameters.require("stream")
            let poll = try EventStreams.PollRequest(try await body(request))
            return try JSON.response(try await streams.poll(id, request: poll, key: key, issuer: issuer))
        }
    }

    private func update(_ request: Request, _ context: CountersignRequestContext, replace: Bool) async throws -> Response {
        let (key, issuer) = try await receiver(request, context)
        let stream = try await streams.update(
            try StreamConfigurationRequest(try await body(request)), replace: replace, key: key, issuer: issuer)
        return try JSON.response(streams.configuration(of: stream, issuer: issuer))
    }

    /// The receiver's key, once it holds `ssf` and belongs to the tenant (a system key, which
    /// no receiver should hold, may not act as a receiver either).
    private func receiver(_ request: Request, _ context: CountersignRequestContext) async throws -> (AdminKey, Issuer) {
        let key = try await guardian.key(request, holding: .ssf)
        let issuer = try context.tenantIssuer()
        guard key.tenantID != nil else {
            throw APIError(.forbidden, .insufficientRights, "a system key is no receiver: use a key of the tenant holding ssf")
        }
        guard key.tenantID == issuer.tenant.id else { throw AdminError.wrongTenant }
        return (key, issuer)
    }

    private func body(_ request: Request) async throws -> Data {
        try await request.bodyData(limit: maximumBodySize)
    }

    private static func object(_ data: Data) throws -> [String: JSONValue] {
        guard let value = try? JSONValue(parsing: data), case .object(let members) = value else {
            throw AdminError.invalidField("body", "must be a JSON object")
        }
        return members
    }

    private static func streamID(_ request: Request, required: Bool) throws -> String? {
        let values: [String] = request.uri.queryParameters.getAll("stream_id")
        guard values.count <= 1 else { throw APIError.badRequest("query parameter stream_id is given more than once") }
        guard let id = values.first, !id.isEmpty else {
            if required { throw APIError.badRequest("query parameter stream_id is required") }
            return nil
        }
        return id
    }

    private static func status(_ stream: EventStream) -> EventStreams.StatusAnswer {
        EventStreams.StatusAnswer(streamID: stream.id, status: stream.status.rawValue, reason: stream.statusReason)
    }
}
