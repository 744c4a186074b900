import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird

/// The device protocol's HTTP endpoints (`docs/protocol.md`), served for the default tenant at
/// `/device/v1/…` and for every tenant at `/t/<slug>/device/v1/…`.
struct DeviceRoutes: Sendable {
    let enrollment: EnrollmentService
    let authenticator: DeviceAuthenticator
    let selfService: DeviceSelfService
    let approvals: ApprovalService
    /// Wakes the live streams of connected devices.
    let events: ApprovalEvents
    let tenants: TenantService
    let origin: PublicOrigin
    let metrics: ServerMetrics
    let maximumBodySize: Int
    let now: @Sendable () -> Date
    /// How often an idle live stream sends a keepalive comment.
    let liveStreamKeepalive: Duration
    /// What the user's other devices are told, and their "not me".
    let notices: SecurityNoticeService

    func register(on routes: TenantRoutes) {
        let router = routes.group("/device/v1", surface: .api)
        router.post("/enrollments") { request, context in try await self.enroll(request, context) }
        router.get("/server-key") { _, context in
            try JSON.response(ServerKeyResponse(key: try self.tenant(context).signingKey))
        }
        router.get("/self") { request, context in
            try await self.signed(request, context) { device, tenant, _ in
                try JSON.response(try await selfService.describe(device, tenant: tenant))
            }
        }
        router.patch("/self") { request, context in
            try await self.signed(request, context) { device, tenant, body in
                let rename = try JSON.decode(DeviceRename.self, from: body)
                return try JSON.response(try await selfService.rename(device, to: rename.name, tenant: tenant))
            }
        }
        router.delete("/self") { request, context in
            try await self.signed(request, context) { device, tenant, _ in
                try await selfService.unenroll(device, tenant: tenant)
                return Response(status: .noContent, headers: [.cacheControl: "no-store"])
            }
        }
        router.put("/self/push-token") { request, context in
            try await self.signed(request, context) { device, tenant, body in
                let push = try JSON.decode(PushRegistration.self, from: body)
                return try JSON.response(try await selfService.setPush(device, push, tenant: tenant))
            }
        }
        router.delete("/self/push-token") { request, context in
            try await self.signed(request, context) { device, tenant, _ in
                try JSON.response(try await selfService.setPush(device, nil, tenant: tenant))
            }
        }
        router.get("/requests") { request, context in
            try await self.signed(request, context) { device, _, _ in
                try JSON.response(PendingRequestList(requests: try await approvals.inbox(for: device)))
            }
        }
        router.get("/requests/stream") { request, context in
            try await self.signed(request, context) { device, _, _ in
                RequestStream(
                    events: events, keepalive: liveStreamKeepalive, metrics: metrics, now: now,
                    approvals: approvals, device: device, clientGone: await InputClosedWatch.clientGone(on: context.channel)
                ).response()
            }
        }
        router.get("/requests/{id}") { request, context in
            try await self.signed(request, context) { device, _, _ in
                let id = try context.parameters.require("id")
                return try JSON.response(try await approvals.request(id, for: device))
            }
        }
        router.post("/requests/{id}/response") { request, context in
            // The answer's nonce is recorded as `AnswerNonce` says, in the decision's commit if it can.
            try await self.signedRecordingNonce(request, context) { device, tenant, body, nonce in
                let id = try context.parameters.require("id")
                let nonce = AnswerNonce(nonce, ledger: authenticator)
                let submission: ApprovalSubmission
                do {
                    submission = try JSON.decode(ApprovalSubmission.self, from: body)
                } catch {
                    try await nonce.afterRefusal()
                    throw error
                }
                return try JSON.response(try await approvals.answer(
                    id, by: device, tenant: tenant, submission: submission, nonce: nonce))
            }
        }
        router.get("/notices") { request, context in
            try await self.signed(request, context) { device, _, _ in
                try JSON.response(SecurityNoticeList(notices: try await notices.notices(for: device).map(\.item)))
            }
        }
        router.post("/notices/{id}/not-me") { request, context in
            try await self.signed(request, context) { device, tenant, _ in
                let id = try context.parameters.require("id")
                return try JSON.response(try await notices.reportNotMe(id, by: device, tenant: tenant))
            }
        }
        router.post("/handovers") { request, context in
            try await self.signed(request, context) { device, tenant, body in
                let start = body.isEmpty ? HandoverStart() : try JSON.decode(HandoverStart.self, from: body)
                return try JSON.response(
                    try await enrollment.startHandover(from: device, tenant: tenant, retire: start.retire ?? false),
                    status: .created)
            }
        }
        router.get("/handovers/{id}") { request, context in
            try await self.signed(request, context) { device, _, _ in
                try JSON.response(try await enrollment.handoverState(try context.parameters.require("id"), for: device))
            }
        }
        router.post("/handovers/{id}/approve") { request, context in
            try await self.signed(request, context) { device, _, body in
                let approval = try JSON.decode(HandoverApproval.self, from: body)
                return try JSON.response(try await enrollment.approveHandover(
                    try context.parameters.require("id"), number: approval.number, by: device))
            }
        }
        router.post("/handovers/{id}/deny") { request, context in
            try await self.signed(request, context) { device, _, _ in
                try JSON.response(try await enrollment.denyHandover(try context.parameters.require("id"), by: device))
            }
        }
        router.post("/self/factors") { request, context in
            try await self.signed(request, context) { device, tenant, body in
                let addition = try JSON.decode(FactorAddition.self, from: body)
                return try JSON.response(try await selfService.addFactors(device, addition, tenant: tenant))
            }
        }
        router.put("/self/pin") { request, context in
            try await self.signed(request, context) { device, tenant, body in
                let change = try JSON.decode(PINChange.self, from: body)
                return try JSON.response(try await selfService.changePIN(device, change, tenant: tenant))
            }
        }
    }

    private func tenant(_ context: CountersignRequestContext) throws -> Tenant {
        try context.tenantIssuer().tenant
    }

    private func enroll(_ request: Request, _ context: CountersignRequestContext) async throws -> Response {
        do {
            let tenant = try tenant(context)
            // The user's access token may stand in for a ticket (`EnrollmentService`).
            let accessToken: String?
            do {
                accessToken = try request.headers[.authorization].flatMap(BearerToken.fromHeader)
            } catch {
                throw EnrollmentError.invalidAccessToken("the Authorization header is not Bearer followed by a token")
            }
            let submission = try await request.decodeJSON(EnrollmentSubmission.self, limit: maximumBodySize)
            let response = try await enrollment.enroll(submission, tenant: tenant, accessToken: accessToken)
            metrics.enrollment(outcome: "enrolled")
            return try JSON.response(response, status: .created)
        } catch let failure as any WireFailure {
            metrics.enrollment(outcome: failure.wireError.code ?? "invalid_request")
            throw failure
        }
    }

    /// Runs `body` for a request whose device signature checks out; every signature failure is
    /// a 401 naming what was wrong.
    private func signed(
        _ request: Request, _ context: CountersignRequestContext,
        _ body: (Device, Tenant, Data) async throws -> Response
    ) async throws -> Response {
        let tenant = try tenant(context)
        let (call, data) = try await verified(request, tenant: tenant)
        do {
            try await authenticator.record(call.nonce)
            return try await body(try await authenticator.seen(call), tenant, data)
        } catch let error as DeviceRequestError {
            if error == .replayed { authenticator.rejectedAsReplayed() }
            throw try await unauthorized(error, request: request, tenant: tenant)
        }
    }

    /// Like `signed`, for a body that records the call's nonce itself, in the commit of what it
    /// changes, or by itself when it changes nothing (`replayed` if the device used it already),
    /// on every path, a thrown one included. The device is noted as seen once the body is done.
    private func signedRecordingNonce(
        _ request: Request, _ context: CountersignRequestContext,
        _ body: (Device, Tenant, Data, DeviceNonce) async throws -> Response
    ) async throws -> Response {
        let tenant = try tenant(context)
        let (call, data) = try await verified(request, tenant: tenant)
        let response: Response
        do {
            response = try await body(call.device, tenant, data, call.nonce)
        } catch let error as DeviceRequestError {
            if error == .replayed { authenticator.rejectedAsReplayed() }
            throw try await unauthorized(error, request: request, tenant: tenant)
        } catch {
            _ = try await authenticator.seen(call)
            throw error
        }
        _ = try await authenticator.seen(call)
        return response
    }

    /// The body of a device call and its signature, checked but with the nonce not yet recorded;
    /// a refused signature is the 401 of `unauthorized`.
    private func verified(_ request: Request, tenant: Tenant) async throws -> (call: VerifiedDeviceCall, body: Data) {
        let data = try await request.bodyData(limit: maximumBodySize)
        do {
            let call = try await authenticator.authenticateDeferringNonce(
                authorization: request.headers[.authorization], method: request.method.rawValue,
                url: origin.base + request.uri.description, body: data, tenant: tenant)
            return (call, data)
        } catch let error as DeviceRequestError {
            throw try await unauthorized(error, request: request, tenant: tenant)
        }
    }

    /// The 401 for a refused signature. When the server no longer knows the device, the answer
    /// carries a `DeregistrationNotice` signed by the tenant key for this request's `jti`.
    private func unauthorized(_ error: DeviceRequestError, request: Request, tenant: Tenant) async throws -> APIError {
        // Not a bad signature: the device is known and proved itself, and may not do this yet.
        if error == .handoverPending { return APIError(.forbidden, error.code, error.description) }
        var notice: String?
        if error == .unknownDevice || error == .deviceDeregistered,
           let signature = try? DeviceRequestSignature.parse(authorizationHeader: request.headers[.authorization]) {
            let reason: DeregistrationNotice.Reason? = if error == .deviceDeregistered {
                try await authenticator.store.device(id: signature.deviceID)?
                    .deregisteredReason ?? .deviceRemoved
            } else { nil }
            notice = try DeregistrationNotice(
                deviceID: signature.deviceID, status: error == .unknownDevice ? .unknown : .deleted,
                requestNonce: signature.nonce, issuedAt: Int64(now().timeIntervalSince1970), reason: reason
            ).sign(with: try await tenants.signingKey(for: tenant))
        }
        return APIError(.unauthorized, error.code, error.description, deregistration: notice,
                        headers: [.wwwAuthenticate: "\(DeviceRequestSignature.scheme) error=\"\(error.code.rawValue)\""])
    }
}
