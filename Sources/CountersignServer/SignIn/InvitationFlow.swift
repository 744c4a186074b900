import CountersignCore
import Foundation

/// An enrollment invitation: the link an administrator sends a person who has no phone enrolled
/// yet (`invitation_url` of a new enrollment ticket). It opens a page with the ticket's QR code
/// and the enrollment link for the phone, which waits until the phone has enrolled and then
/// starts the person's sign-in, their username filled in, approved on that phone. A browser
/// signed in as someone else is told so first; the sign-in then ends that session. The ticket is
/// the invitation: single use, and short-lived (ten minutes unless the administrator chose).
///
/// - `GET /invitation?ticket=cst_…`: the page, or a page saying why the invitation cannot be
///   used (unknown, used, expired, revoked), each its own message.
/// - `POST /invitation/wait`: the ticket's state (`pending`, `enrolled`) as soon as it is not
///   pending, or after a long poll; one that can no longer be used is the script surface's
///   error (`invalid_ticket`) with the message that reloading the page would show.
/// - `POST /invitation/sign-in`: once the phone has enrolled, the sign-in of the ticket's user.
///   Signing in is still an approval on the phone: knowing the link is not enough.
struct InvitationFlow: Sendable {
    let enrollment: EnrollmentService
    let signIn: SignInFlow
    let events: ApprovalEvents

    static let waitingStatus = "Waiting for the phone…"

    func show(_ parameters: FormParameters, _ visit: SignInFlow.Visit, status: String = waitingStatus) async throws -> PageAnswer {
        guard let secret = parameters["ticket"] else { throw InvitationRefusal.incompleteLink }
        let (ticket, uri) = try await InvitationRefusal.explaining { try await enrollment.invitation(secret, tenant: visit.tenant) }
        guard let invitee = try await signIn.store.user(id: ticket.userID, tenantID: visit.tenant.id) else {
            throw InvitationRefusal(.invalidTicket)
        }
        var signedInAs: String?
        if let session = try await signIn.liveSession(visit, at: signIn.now()), session.userID != invitee.id {
            signedInAs = try await signIn.store.user(id: session.userID, tenantID: visit.tenant.id)?.username
        }
        let png = try QRCode(encoding: uri.description).png(moduleSize: 6)
        return .page("invitation", InvitationPage(
            tenantName: visit.tenant.displayName, base: signIn.base(visit), ticket: secret, username: invitee.username,
            signedInAs: signedInAs, qrImage: "data:image/png;base64," + png.base64EncodedString(),
            enrollmentURI: uri.description, expiresAt: AccountTime.text(ticket.expiresAt), status: status))
    }

    func wait(_ form: FormParameters, _ visit: SignInFlow.Visit) async throws -> PageAnswer {
        guard let secret = form["ticket"] else { throw InvitationRefusal.incompleteLink }
        let state = try await InvitationRefusal.explaining {
            try await LongPoll(events: events).wait(while: EnrollmentService.TicketState.pending) {
                try await enrollment.state(ofTicket: secret, tenant: visit.tenant)
            }
        }
        guard state != .expired else { throw try await refusal(secret, visit) }
        return try .json(["state": state.rawValue])
    }

    /// The sign-in the page goes on to once the phone has enrolled (and its "Done" button).
    func startSignIn(_ form: FormParameters, _ visit: SignInFlow.Visit) async throws -> PageAnswer {
        guard let secret = form["ticket"] else { throw InvitationRefusal.incompleteLink }
        let invitee = try await InvitationRefusal.explaining { try await enrollment.invitee(ofTicket: secret, tenant: visit.tenant) }
        switch invitee.state {
        case .enrolled:
            guard let user = try await signIn.store.user(id: invitee.userID, tenantID: visit.tenant.id) else {
                throw InvitationRefusal(.invalidTicket)
            }
            return try await signIn.beginAccountSignIn(visit, loginHint: user.username)
        case .pending:
            return try await show(form, visit, status: "Your phone is not set up yet. Scan the code with the app first; then sign in.")
        case .expired:
            throw try await refusal(secret, visit)
        }
    }

    /// Why the invitation `secret` can no longer enroll a phone, as its page says it.
    private func refusal(_ secret: String, _ visit: SignInFlow.Visit) async throws -> InvitationRefusal {
        do {
            _ = try await enrollment.invitation(secret, tenant: visit.tenant)
        } catch let error as EnrollmentError {
            return InvitationRefusal(error)
        }
        return InvitationRefusal(.ticketExpired)
    }
}

/// Why an invitation cannot be used, as its page says it: an error page (`ErrorSurface.page`),
/// or the same words to the page's script (`ErrorSurface.script`).
struct InvitationRefusal: WireFailure, Sendable, Equatable {
    let message: String

    static let heading = "This invitation cannot be used"
    static let incompleteLink = InvitationRefusal(
        message: "The invitation link is incomplete: it names no invitation. Open the link exactly as you received it.")

    init(message: String) { self.message = message }

    init(_ error: EnrollmentError) {
        message = switch error {
        case .ticketUsed: "This invitation was already used to enroll a phone. If that was you, sign in with that phone."
        case .ticketExpired: "This invitation has expired. Ask for a new one."
        case .ticketRevoked: "This invitation was withdrawn. Ask for a new one."
        default: "This invitation is not valid here. Open the link exactly as you received it."
        }
    }

    var wireError: WireError {
        WireError(.badRequest, code: "invalid_ticket", description: message, heading: Self.heading)
    }

    /// `step`, its enrollment errors said as the invitation's page says them.
    static func explaining<T>(_ step: () async throws -> T) async throws -> T {
        do {
            return try await step()
        } catch let error as EnrollmentError {
            throw InvitationRefusal(error)
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
    /// The heading the page takes when its script learns the invitation can no longer be used.
    let refusedHeading = InvitationRefusal.heading
}
