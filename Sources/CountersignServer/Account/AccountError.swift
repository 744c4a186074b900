import HTTPTypes

/// Why an account page cannot do what a form asked. Each case is one error page, with its
/// status and a link back to the account (`ErrorSurface.page`), or one JSON error to a page's
/// script (`ErrorSurface.script`); nothing was changed.
enum AccountError: WireFailure, Sendable, Equatable {
    /// The form's `csrf` field is missing or is not the session's token: the form did not come
    /// from this session's pages (another site made the browser post it, or the session changed).
    case forgedForm
    /// No active device of the signed-in user in this tenant has this id.
    case unknownDevice
    /// No passkey of the signed-in user in this tenant has this id.
    case unknownPasskey
    /// No remembered browser of the signed-in user in this tenant has this id.
    case unknownRememberedBrowser
    /// No request of the signed-in user in this tenant has this id.
    case unknownApproval
    /// Only an approved request can be reported: a denied one let nobody in.
    case notApproved
    /// No enrollment ticket of the signed-in user has this id.
    case unknownTicket
    /// The form could not be read.
    case malformedForm(String)
    /// The session was opened with a recovery code or an access pass, which reach enrollment
    /// only (docs/recovery.md).
    case recoveryOnly
    /// Recovery codes are made after a sign-in with a phone or a passkey, not with a code.
    case codesNeedDevice

    var wireError: WireError {
        WireError(status, code: code, description: message, heading: heading, back: .account)
    }

    var status: HTTPResponse.Status {
        switch self {
        case .forgedForm: .forbidden
        case .unknownDevice, .unknownPasskey, .unknownRememberedBrowser, .unknownApproval, .unknownTicket: .notFound
        case .notApproved: .conflict
        case .malformedForm: .badRequest
        case .recoveryOnly, .codesNeedDevice: .forbidden
        }
    }

    /// The code shown on the page, for support.
    var code: String {
        switch self {
        case .forgedForm: "invalid_csrf_token"
        case .unknownDevice: "unknown_device"
        case .unknownPasskey: "unknown_passkey"
        case .unknownRememberedBrowser: "unknown_remembered_browser"
        case .unknownApproval: "unknown_request"
        case .notApproved: "request_not_approved"
        case .unknownTicket: "unknown_ticket"
        case .malformedForm: "invalid_request"
        case .recoveryOnly: "recovery_session"
        case .codesNeedDevice: "device_sign_in_required"
        }
    }

    var heading: String {
        switch self {
        case .forgedForm: "This form cannot be used"
        case .unknownDevice: "Phone not found"
        case .unknownPasskey: "Passkey not found"
        case .unknownRememberedBrowser: "Browser not found"
        case .unknownApproval, .notApproved: "Request not found"
        case .unknownTicket: "Enrollment not found"
        case .malformedForm: "This form cannot be read"
        case .recoveryOnly: "Signed in for recovery only"
        case .codesNeedDevice: "Sign in with your phone first"
        }
    }

    var message: String {
        switch self {
        case .forgedForm:
            "The form did not come from your account page, or your session changed since it was shown. Nothing was changed. Go back to your account and try again."
        case .unknownDevice:
            "None of your phones has this id. It may have been removed already."
        case .unknownPasskey:
            "None of your passkeys has this id. It may have been removed already."
        case .unknownRememberedBrowser:
            "None of your remembered browsers has this id. It may have been forgotten or have expired already."
        case .unknownApproval:
            "None of your recent requests has this id. Old requests are deleted after a while."
        case .notApproved:
            "Only an approved request can be reported here: a denied or unanswered request signed nobody in."
        case .unknownTicket:
            "You have no enrollment with this reference. Start a new one from your account."
        case .malformedForm(let reason):
            "The form could not be read: \(reason). Nothing was changed."
        case .recoveryOnly:
            "You signed in with a recovery code or a temporary access pass: you can enroll a new phone or add a passkey, nothing else. Sign in with the new phone or passkey to manage your account. Nothing was changed."
        case .codesNeedDevice:
            "New recovery codes are made after signing in with your phone or a passkey. Sign in with one, then try again. Nothing was changed."
        }
    }
}

/// Why a script of the account pages (the enrollment's wait, the passkey buttons) was refused
/// before its step ran: a JSON error (`ErrorSurface.script`) whose `redirect` tells the script
/// where the person goes on.
enum AccountScriptError: WireFailure, Sendable {
    case signedOut(String)
    case staleSignIn(String)
    case invalidName(String)

    var wireError: WireError {
        switch self {
        case .signedOut(let redirect):
            WireError(.unauthorized, code: "login_required", description: "You are signed out.", redirect: redirect)
        case .staleSignIn(let redirect):
            WireError(.unauthorized, code: "login_required",
                      description: "Adding a passkey needs a sign-in of the last ten minutes.", redirect: redirect)
        case .invalidName(let message):
            WireError(.badRequest, code: "invalid_name", description: message)
        }
    }
}
