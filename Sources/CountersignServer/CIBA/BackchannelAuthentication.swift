import CountersignCore
import Foundation

/// `POST /bc-authorize` (CIBA §7): the checks of §7.2 in order, each a small parse step that
/// turns a raw parameter into a value that can only be valid, then the request is stored and
/// sent to the user's devices. The parameters are the form's, or the claims of the signed
/// request (`request`, §7.1.1) that `RequestObject` has verified.
///
/// `authorization_details` (RFC 9396) is checked against the tenant's types and the client's
/// registration (`AuthorizationDetails`), then shown on the device and signed with the rest.
/// `request_uri`, which Countersign does not implement but whose silent omission would mislead
/// the client, is refused, not ignored; every other unknown parameter is ignored (RFC 6749 §3.1).
struct BackchannelAuthentication: Sendable {
    let rateLimit: ClientRateLimit
    let jwtIDs: JWTIDLedger
    let userHints: UserHintResolver
    let userCodes: UserCodeCheck
    let approvals: ApprovalService

    func start(_ form: FormParameters, client: Client, issuer: Issuer,
               requestedFrom context: TransactionDetails.Context) async throws -> BackchannelAuthenticationResponse {
        try await rateLimit.admit(client, policy: issuer.tenant.policy)
        guard client.deliveryMode != .push || issuer.tenant.policy.pushDeliveryAllowed else {
            throw BackchannelAuthenticationError.deliveryModeUnsupported(client.deliveryMode)
        }
        if form.contains("request_uri") { throw BackchannelAuthenticationError.parameterUnsupported("request_uri") }
        let parameters = try await RequestObject.parameters(of: form, client: client, issuer: issuer, jwtIDs: jwtIDs)
        let authorizationDetails = try parameters.authorizationDetails.map {
            try AuthorizationDetails(
                parameter: $0, allowedTypes: client.authorizationDetailsTypes, registry: issuer.tenant.authorizationDetailTypes)
        }
        let scope = try Scope(parameters["scope"], allowedFor: client)
        let expiry = try RequestedExpiry(parameters["requested_expiry"])
        let bindingMessage = try parameters["binding_message"].map(BindingMessage.init)
        let acrValues = try parameters["acr_values"].map(AcrValues.init)
        let notificationToken = try ClientNotificationToken.of(parameters["client_notification_token"], client: client)
        let userCode = try UserCodeCheck.parameter(parameters["user_code"], client: client)
        let hint = try UserHint(parameters)
        let user = try await userHints.user(for: hint, client: client, issuer: issuer)
        try await userCodes.verify(userCode, user: user, client: client)
        let approval = NewApproval(
            client: client, user: user, scope: scope, acrValues: acrValues, bindingMessage: bindingMessage,
            context: context, lifetime: expiry.seconds,
            required: RequiredClass(requested: acrValues?.values, client: client, policy: issuer.tenant.policy),
            clientNotificationToken: notificationToken, authorizationDetails: authorizationDetails)
        let started = try await approvals.start(approval, tenant: issuer.tenant)
        return BackchannelAuthenticationResponse(
            authReqID: started.authReqID, expiresIn: expiry.seconds,
            interval: client.deliveryMode == .push ? nil : approval.interval,
            matchNumber: started.transaction.matchNumber)
    }
}

/// The acknowledgement of CIBA §7.3, and for number matching the number the relying party
/// shows its user (`match_number`, an extension member: CIBA §7.3 lets clients ignore members
/// they do not know).
struct BackchannelAuthenticationResponse: Encodable, Sendable {
    let authReqID: String
    let expiresIn: Int
    /// For poll and ping clients only: a push client never calls the token endpoint.
    let interval: Int?
    let matchNumber: Int64?

    enum CodingKeys: String, CodingKey {
        case interval
        case matchNumber = "match_number"
        case authReqID = "auth_req_id"
        case expiresIn = "expires_in"
    }
}
