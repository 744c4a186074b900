import CountersignCore
import Foundation
import Hummingbird

/// `/admin/v1/tenants/{tenant}/users`: users, their enrollment tickets and their devices.
struct UserAdminRoutes: Sendable {
    let store: any UserAdminStore
    let guardian: AdminGuard
    /// Issues enrollment tickets, the same way for every caller.
    let enrollment: EnrollmentService
    let maximumBodySize: Int
    let now: @Sendable () -> Date

    /// What `POST …/users/{id}/factor-reset` removed.
    struct FactorReset: Encodable, Sendable {
        let devicesRemoved: Int
        let passkeysRemoved: Int
        enum CodingKeys: String, CodingKey {
            case devicesRemoved = "devices_removed"
            case passkeysRemoved = "passkeys_removed"
        }
    }

    struct TicketRequest: Decodable {
        var lifetimeSeconds: Int?
        /// Mail the invitation link to the user's address as well.
        var sendEmail: Bool?
        enum CodingKeys: String, CodingKey {
            case lifetimeSeconds = "lifetime_seconds"
            case sendEmail = "send_email"
        }
    }

    struct IssuedTicketView: Encodable, Sendable {
        let ticket: EnrollmentTicket
        /// Shown once: it carries the ticket secret.
        let enrollmentURI: String
        /// The same ticket as a link to a page with its QR code, for the person to open.
        let invitationURL: String
        let qrSVG: String
        let qrPNG: String
        /// The mailed invitation (`GET …/mail/deliveries`), when `send_email` asked for one.
        let mailID: String?
        enum CodingKeys: String, CodingKey {
            case ticket
            case mailID = "mail_id"
            case enrollmentURI = "enrollment_uri"
            case invitationURL = "invitation_url"
            case qrSVG = "qr_svg"
            case qrPNG = "qr_png_base64"
        }
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/users"
        let limit = maximumBodySize
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .usersRead)
            let page = try PageRequest(request)
            let users = try await store.users(
                tenantID: tenant.id, usernamePrefix: try Self.search(request), after: page.cursor, limit: page.fetchLimit)
            return try JSON.response(page.page(users, cursor: \.id))
        }
        router.post(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .usersManage)
            let registration = try await request.decodeJSON(UserRegistration.self, limit: limit)
            let date = now()
            let user = try registration.registered(id: Identifier.make("usr", at: date), tenantID: tenant.id, at: date)
            try await store.create(user, actor: "admin-key:\(key.id)")
            return try JSON.response(user, status: .created)
        }
        router.get(RouterPath(base + "/{id}")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .usersRead)
            return try JSON.response(try await find(context, tenant: tenant))
        }
        router.patch(RouterPath(base + "/{id}")) { request, context in
            try await update(request, context)
        }
        router.delete(RouterPath(base + "/{id}")) { request, context in
            try await delete(request, context)
        }
        router.post(RouterPath(base + "/{id}/enrollment-tickets")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .enrollmentsCreate)
            let user = try await find(context, tenant: tenant)
            guard user.status == .active else { throw AdminError.conflict("user \(user.id) is not active") }
            let body = try await request.bodyData(limit: limit)
            let fields = body.isEmpty ? TicketRequest() : try JSON.decode(TicketRequest.self, from: body)
            let lifetime = fields.lifetimeSeconds
            if let lifetime, !(60...86_400).contains(lifetime) {
                throw AdminError.invalidField("lifetime_seconds", "must be from 60 to 86400")
            }
            let mailing = fields.sendEmail ?? false
            if mailing, user.email == nil {
                throw AdminError.conflict("user \(user.id) has no e-mail address to send the invitation to")
            }
            let issued = try await enrollment.issueTicket(
                for: user, tenant: tenant, lifetime: lifetime.map(TimeInterval.init), actor: "admin-key:\(key.id)",
                mailing: mailing)
            let qr = try QRCode(encoding: issued.uri.description)
            return try JSON.response(
                IssuedTicketView(ticket: issued.ticket, enrollmentURI: issued.uri.description,
                                 invitationURL: issued.invitationURL, qrSVG: qr.svg(),
                                 qrPNG: qr.png().base64EncodedString(), mailID: issued.mailID),
                status: .created)
        }
        router.get(RouterPath(base + "/{id}/enrollment-tickets")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .usersRead)
            let user = try await find(context, tenant: tenant)
            let page = try PageRequest(request)
            let tickets = try await store.tickets(userID: user.id, before: page.cursor, limit: page.fetchLimit)
            return try JSON.response(page.page(tickets, cursor: \.id))
        }
        router.delete(RouterPath(base + "/{id}/enrollment-tickets/{ticket}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .enrollmentsCreate)
            let user = try await find(context, tenant: tenant)
            let ticketID = try context.parameters.require("ticket")
            guard let ticket = try await store.ticket(id: ticketID), ticket.userID == user.id else {
                throw AdminError.notFound("enrollment ticket \(ticketID)")
            }
            guard try await store.revoke(ticket, actor: "admin-key:\(key.id)", at: now()) else {
                throw AdminError.conflict("enrollment ticket \(ticket.id) is already used or revoked")
            }
            return Response(status: .noContent)
        }
        router.post(RouterPath(base + "/{id}/factor-reset")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .devicesManage)
            let user = try await find(context, tenant: tenant)
            let removed = try await store.resetFactors(user, actor: "admin-key:\(key.id)", at: now())
            return try JSON.response(FactorReset(devicesRemoved: removed.devices, passkeysRemoved: removed.passkeys))
        }
        router.get(RouterPath(base + "/{id}/devices")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .devicesRead)
            let user = try await find(context, tenant: tenant)
            let page = try PageRequest(request)
            let devices = try await store.devices(userID: user.id, after: page.cursor, limit: page.fetchLimit)
            return try JSON.response(page.page(devices.map { DeviceRecord($0) }, cursor: \.id))
        }
        router.get("/admin/v1/tenants/{tenant}/devices") { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .devicesRead)
            let page = try PageRequest(request)
            let push: DevicePushState? = try Self.pushState(request)
            let devices: [DeviceRecord] = try await store.devices(
                tenantID: tenant.id, push: push, after: page.cursor, limit: page.fetchLimit)
            return try JSON.response(page.page(devices) { $0.id })
        }
        router.get("/admin/v1/tenants/{tenant}/devices/{id}") { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .devicesRead)
            return try JSON.response(DeviceRecord(try await device(context, tenant: tenant)))
        }
        router.delete("/admin/v1/tenants/{tenant}/devices/{id}") { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .devicesManage)
            let device = try await device(context, tenant: tenant)
            guard try await store.delete(device, actor: "admin-key:\(key.id)", at: now()) else {
                throw AdminError.conflict("device \(device.id) is already deleted")
            }
            return Response(status: .noContent)
        }
    }

    /// Deletes a user with its tickets and devices; each device is recorded as deleted, as if
    /// removed one by one.
    private func delete(_ request: Request, _ context: CountersignRequestContext) async throws -> Response {
        let (key, tenant) = try await guardian.tenant(request, context, holding: .usersManage)
        let user = try await find(context, tenant: tenant)
        try await store.delete(user, actor: "admin-key:\(key.id)", at: now())
        return Response(status: .noContent)
    }

    private func update(_ request: Request, _ context: CountersignRequestContext) async throws -> Response {
        let (key, tenant) = try await guardian.tenant(request, context, holding: .usersManage)
        let existing = try await find(context, tenant: tenant)
        let registration = try await request.decodeJSON(UserRegistration.self, limit: maximumBodySize)
        let (user, userCode) = try registration.applied(to: existing, at: now())
        try await store.update(user, userCode: userCode, actor: "admin-key:\(key.id)")
        return try JSON.response(user)
    }

    private func find(_ context: CountersignRequestContext, tenant: Tenant) async throws -> User {
        let id = try context.parameters.require("id")
        guard let user = try await store.user(id: id, tenantID: tenant.id) else {
            throw AdminError.notFound("user \(id)")
        }
        return user
    }

    private func device(_ context: CountersignRequestContext, tenant: Tenant) async throws -> Device {
        let id = try context.parameters.require("id")
        guard let device = try await store.device(id: id), device.tenantID == tenant.id else {
            throw AdminError.notFound("device \(id)")
        }
        return device
    }

    /// The `push` filter of the tenant-wide device list: `valid`, `invalid` or `none`.
    static func pushState(_ request: Request) throws(APIError) -> DevicePushState? {
        let values = request.uri.queryParameters.getAll("push")
        guard values.count <= 1 else { throw .badRequest("query parameter push is given more than once") }
        guard let value = values.first else { return nil }
        guard let state = DevicePushState(rawValue: String(value)) else {
            throw .badRequest("push must be valid, invalid or none")
        }
        return state
    }

    /// `?q=`: a username prefix to search for, 1–128 characters, given once.
    static func search(_ request: Request) throws(APIError) -> String? {
        let values = request.uri.queryParameters.getAll("q")
        guard values.count <= 1 else { throw .badRequest("query parameter q is given more than once") }
        guard let value = values.first.map({ String($0) }) else { return nil }
        guard (1...128).contains(value.count),
              !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .badRequest("q must be 1 to 128 characters without control characters")
        }
        return value
    }
}
