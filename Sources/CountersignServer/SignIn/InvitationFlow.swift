import CountersignCore
import Foundation
import Hummingbird

/// An enrollment invitation: the link an administrator sends a person who has no phone enrolled
/// yet (`invitation_url` of a new enrollment ticket). It opens a page with the ticket's QR code
/// and the enrollment link for the phone, which waits until the phone has enrolled and then
/// starts the person's sign-in, their username filled in, approved on that phone. A browser
/// signed in as someone else is told so first; the sign-in then ends that session. The ticket is
/// the invitation: single use, and short-lived (ten minutes unless the administrator chose).
///
/// - `GET /invitation?ticket=cst_…`: the page, or a page saying why the invitation cannot be
///   used (unknown, used, expired, revoked), each its own message.
/// - `POST /invitation/wait`: the ticket's state (`pending`, `enrolled`, `expired`) as soon as it
///   is not pending, or after a long poll; an expired one with the heading and message that
///   reloading the page would show.
/// - `POST /invitation/sign-in`: once the phone has enrolled, the sign-in of the ticket's user.
///   Signing in is still an approval on the phone: knowing the link is not enough.
struct InvitationFlow: Sendable {
    let enrollment: EnrollmentService
    let signIn: SignInFlow
    let pages: Pages
    let events: ApprovalEvents

    static let waitingStatus = "Waiting for the phone…"

    func show(_ parameters: FormParameters, _ visit: SignInFlow.Visit, status: String = waitingStatus) async throws -> Response {
        guard let secret = parameters["ticket"] else {
            return refusal("The invitation link is incomplete: it names no invitation. Open the link exactly as you received it.", visit)
        }
        let (ticket, uri): (EnrollmentTicket, EnrollmentURI)
        do {
            (ticket, uri) = try await enrollment.invitation(secret, tenant: visit.tenant)
        } catch let error as EnrollmentError {
            return refusal(Self.message(error), visit)
        }
        guard let invitee = try await signIn.store.user(id: ticket.userID, tenantID: visit.tenant.id) else {
            return refusal(Self.message(.invalidTicket), visit)
        }
        var signedInAs: String?
        if let session = try await signIn.liveSession(visit, at: signIn.now()), session.userID != invitee.id {
            signedInAs = try await signIn.store.user(id: session.userID, tenantID: visit.tenant.id)?.username
        }
        let png = try QRCode(encoding: uri.description).png(moduleSize: 6)
        return pages.response("invitation", InvitationPage(
            tenantName: visit.tenant.displayName, base: signIn.base(visit), ticket: secret, username: invitee.username,
            signedInAs: signedInAs, qrImage: "data:image/png;base64," + png.base64EncodedString(),
            enrollmentURI: uri.description, expiresAt: AccountTime.text(ticket.expiresAt), status: status))
    }

    func wait(_ form: FormParameters, _ visit: SignInFlow.Visit) async throws -> Response {
        guard let secret = form["ticket"] else { throw EnrollmentError.invalidTicket }
        let state = try await LongPoll(events: events).wait(while: EnrollmentService.TicketState.pending) {
            try await enrollment.state(ofTicket: secret, tenant: visit.tenant)
        }
        guard state == .expired else { return try JSON.response(["state": state.rawValue]) }
        return try JSON.response(["state": state.rawValue, "heading": Self.refusalHeading, "message": try await reason(secret, visit)])
    }

    /// The sign-in the page goes on to once the phone has enrolled (and its "Done" button).
    func startSignIn(_ form: FormParameters, _ visit: SignInFlow.Visit) async throws -> Response {
        guard let secret = form["ticket"] else {
            return refusal("The invitation link is incomplete: it names no invitation. Open the link exactly as you received it.", visit)
        }
        let invitee: (state: EnrollmentService.TicketState, userID: String)
        do {
            invitee = try await enrollment.invitee(ofTicket: secret, tenant: visit.tenant)
        } catch let error as EnrollmentError {
            return refusal(Self.message(error), visit)
        }
        switch invitee.state {
        case .enrolled:
            guard let user = try await signIn.store.user(id: invitee.userID, tenantID: visit.tenant.id) else {
                return refusal(Self.message(.invalidTicket), visit)
            }
            return try await signIn.beginAccountSignIn(visit, loginHint: user.username)
        case .pending:
            return try await show(form, visit, status: "Your phone is not set up yet. Scan the code with the app first; then sign in.")
        case .expired:
            return refusal(try await reason(secret, visit), visit)
        }
    }

    /// Why the invitation `secret` can no longer enroll a phone, as its page says it.
    private func reason(_ secret: String, _ visit: SignInFlow.Visit) async throws -> String {
        do {
            _ = try await enrollment.invitation(secret, tenant: visit.tenant)
        } catch let error as EnrollmentError {
            return Self.message(error)
        }
        return Self.message(.ticketExpired)
    }

    static let refusalHeading = "This invitation cannot be used"

    private func refusal(_ message: String, _ visit: SignInFlow.Visit) -> Response {
        pages.response(
            "error", ErrorPage(tenantName: visit.tenant.displayName, heading: Self.refusalHeading,
                               message: message, code: "invalid_ticket"),
            status: .badRequest)
    }

    static func message(_ error: EnrollmentError) -> String {
        switch error {
        case .ticketUsed: "This invitation was already used to enroll a phone. If that was you, sign in with that phone."
        case .ticketExpired: "This invitation has expired. Ask for a new one."
        case .ticketRevoked: "This invitation was withdrawn. Ask for a new one."
        default: "This invitation is not valid here. Open the link exactly as you received it."
        }
    }
}

/// `invitation`: set up a first phone, then sign in with it.
struct InvitationPage: PageModel {
    let title = "Set up your phone"
    let tenantName: String
    let script: String? = PageAssets.invitationScript
    let base: String
    let ticket: String
    /// The person invited.
    let username: String
    /// Someone else this browser is signed in as, whom signing in as `username` signs out.
    let signedInAs: String?
    let qrImage: String
    let enrollmentURI: String
    let expiresAt: String
    let status: String
}
