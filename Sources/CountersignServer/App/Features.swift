import Foundation

/// The features the routes call, each built once by `buildApplication` with the few things it
/// needs. A feature that reads or writes storage gets the narrow store it declares beside its
/// flow (`ApprovalStore`, `CIBAGrantStore`, `DeviceSignatureStore`), implemented on the
/// server's database.
struct Features: Sendable {
    let approvals: ApprovalService
    let deviceAuthenticator: DeviceAuthenticator
    let deviceSelfService: DeviceSelfService
    let clientAuthentication: ClientAuthentication
    let backchannel: BackchannelAuthentication
    let tokenEndpoint: TokenEndpoint
    /// The code flow's authorization endpoint and pushed requests.
    let authorization: AuthorizationEndpoint
    let revocation: TokenRevocation
    let introspection: TokenIntrospection
    let accessTokens: AccessTokenVerifier
    let totp: TOTPVerification
    let enrollment: EnrollmentService
    let deviceCertificates: DeviceCertificates
    /// Wakes the live streams of connected devices.
    let approvalEvents: ApprovalEvents
}
