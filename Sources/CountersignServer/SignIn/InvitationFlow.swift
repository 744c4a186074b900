import CountersignCore
import Foundation
import Hummingbird

/// An enrollment invitation: the link an administrator sends a person who has no phone enrolled
/// yet (`invitation_url` of a new enrollment ticket). It opens a page with the ticket's QR code
/// and the enrollment link for the phone, which waits until the phone has enrolled and then goes
/// on to the account page, where the person signs in by approving on that phone. The ticket is
/// the invitation: single use, and short-lived (ten minutes unless the administrator chose).
///
/// - `GET /invitation?ticket=cst_…`: the page, or a page saying why the invitation cannot be
///   used (unknown, used, expired, revoked), each its own message.
/// - `POST /invitation/wait`: the ticket's state (`pending`, `enrolled`, `expired`) as soon as it
///   is not pending, or after a long poll.
struct InvitationFlow: Sendable {
    let enrollment: EnrollmentService
    let signIn: SignInFlow
    let pages: Pages
    let events: ApprovalEvents

    func show(_ parameters: FormParameters, _ visit: SignInFlow.Visit) async throws -> Response {
        guard let secret = parameters["ticket"] else {
            return refusal("The invitation link is incomplete: it names no invitation. Open the link exactly as you received it.", visit)
        }
        let (ticket, uri): (EnrollmentTicket, EnrollmentURI)
        do {
            (ticket, uri) = try await enrollment.invitation(secret, tenant: visit.tenant)
        } catch let error as EnrollmentError {
            return refusal(Self.message(error), visit)
        }
        let png = try QRCode(encoding: uri.description).png(moduleSize: 6)
        return pages.response("invitation", InvitationPage(
            tenantName: visit.tenant.displayName, base: signIn.base(visit), ticket: secret,
            qrImage: "data:image/png;base64," + png.base64EncodedString(), enrollmentURI: uri.description,
            expiresAt: AccountTime.text(ticket.expiresAt)))
    }

    func wait(_ form: FormParameters, _ visit: SignInFlow.Visit) async throws -> Response {
        guard let secret = form["ticket"] else { throw EnrollmentError.invalidTicket }
        let state = try await LongPoll(events: events).wait(while: EnrollmentService.TicketState.pending) {
            try await enrollment.state(ofTicket: secret, tenant: visit.tenant)
        }
        return try JSON.response(["state": state.rawValue])
    }

    private func refusal(_ message: String, _ visit: SignInFlow.Visit) -> Response {
        pages.response(
            "error", ErrorPage(tenantName: visit.tenant.displayName, heading: "This invitation cannot be used",
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

/// `invitation`: set up a first phone.
struct InvitationPage: PageModel {
    let title = "Set up your phone"
    let tenantName: String
    let script: String? = AccountTemplates.enrollScriptName
    let base: String
    let ticket: String
    let qrImage: String
    let enrollmentURI: String
    let expiresAt: String
}
