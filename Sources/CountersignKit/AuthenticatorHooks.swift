import CountersignCore
import Foundation

/// When the app is asked to choose or to pause: enrolling (`registration`) or answering a
/// request (`authentication`). Each hook can be switched on for either, or both.
public enum Ceremony: Sendable, Hashable, CaseIterable {
    case registration
    case authentication
}

/// One factor of an alternative, as a picker shows it.
public struct AuthenticatorOption: Sendable, Equatable {
    public let factor: Factor
    /// "PIN", "Face ID or fingerprint", …
    public let title: String
    public let description: String
    /// The factor's id in policies (`number-match`).
    public var factorID: String { factor.policyName }
    /// An SF Symbols name an app may use, or map to its own icons.
    public let iconName: String

    public init(factor: Factor) {
        self.factor = factor
        switch factor {
        case .confirm:
            (title, description, iconName) = ("Confirm", "Approve on this device.", "checkmark.circle")
        case .numberMatch:
            (title, description, iconName) = ("Number match", "Pick the number the other screen shows.", "number.circle")
        case .pin:
            (title, description, iconName) = ("PIN", "Enter the PIN of this device's enrollment.", "lock")
        case .biometric:
            (title, description, iconName) = ("Biometrics", "Face or fingerprint check on this device.", "faceid")
        case .custom:
            (title, description, iconName) = ("App check", "This app's own verification.", "app.badge.checkmark")
        }
    }
}

/// One way to approve a request: the factors the user goes through, in order.
public struct AuthenticatorGroup: Sendable, Equatable {
    /// The alternative's index in the request's details, which the answer names.
    public let index: Int
    public let options: [AuthenticatorOption]
    /// The factors this enrollment lacks for the alternative ("enroll another authenticator");
    /// empty when it can be used now.
    public let missingFactors: [Factor]

    public var factors: [Factor] { options.map(\.factor) }
    public var isAvailable: Bool { missingFactors.isEmpty }
}

/// The app's choice among the alternatives of a request.
public enum AuthenticatorPick: Sendable, Equatable {
    /// The group whose `index` is this.
    case alternative(Int)
    /// Deny the request as `cancelled`.
    case cancel
}

/// Shows the alternatives of a request and returns the one the user picked. Called only when
/// the request offers two or more alternatives. Groups this enrollment cannot use are included,
/// with what they lack, so the app can offer to enroll it; picking one is refused
/// (`CountersignError.factorsNotEnrolled`).
///
/// ```swift
/// struct SheetPicker: AuthenticatorPicker {
///     func pick(among groups: [AuthenticatorGroup], for details: RequestDetails) async -> AuthenticatorPick {
///         guard let first = groups.first(where: \.isAvailable) else { return .cancel }
///         return .alternative(first.index)
///     }
/// }
/// ```
public protocol AuthenticatorPicker: Sendable {
    func pick(among groups: [AuthenticatorGroup], for details: RequestDetails) async -> AuthenticatorPick
}

/// Where the user is in an alternative: before the factor at `index` (counted from 0; the
/// first is never announced) of `total`.
public struct AuthenticatorStep: Sendable, Equatable {
    public let total: Int
    public let index: Int
    public let nextFactor: Factor
    /// The next factor's id in policies (`number-match`).
    public var nextFactorID: String { nextFactor.policyName }

    public init(total: Int, index: Int, nextFactor: Factor) {
        self.total = total
        self.index = index
        self.nextFactor = nextFactor
    }
}

/// A screen between two factors: "Step 2 of 3 — PIN".
public struct Interstitial: Sendable, Equatable {
    public var title: String
    public var message: String

    public init(title: String, message: String) {
        self.title = title
        self.message = message
    }
}

/// Asked before each factor after the first of an alternative: the screen to show, or nil to go
/// straight on. The app's `ChallengeHandler.present(_:at:)` shows it.
///
/// ```swift
/// struct StepScreens: InterstitialDelegate {
///     func interstitial(before step: AuthenticatorStep, in ceremony: Ceremony) async -> Interstitial? {
///         Interstitial(title: "Step \(step.index + 1) of \(step.total)",
///                      message: "Next: \(AuthenticatorOption(factor: step.nextFactor).title)")
///     }
/// }
/// ```
public protocol InterstitialDelegate: Sendable {
    func interstitial(before step: AuthenticatorStep, in ceremony: Ceremony) async -> Interstitial?
}

/// What the user did on an interstitial.
public enum InterstitialAnswer: Sendable, Equatable {
    case proceed
    /// Deny the request as `cancelled`.
    case cancel
}

/// The app's hooks into approving with several authenticators. Both are optional: without a
/// picker the first alternative this enrollment can use is taken; without an interstitial
/// delegate the factors follow one another directly. Each is used only in the ceremonies named
/// beside it (both, unless the app says otherwise).
///
/// ```swift
/// let authenticator = CountersignAuthenticator(
///     keyStore: store, hooks: AuthenticatorHooks(picker: SheetPicker(), interstitials: StepScreens(),
///                                                pickerCeremonies: [.authentication]))
/// ```
public struct AuthenticatorHooks: Sendable {
    public var picker: (any AuthenticatorPicker)?
    public var interstitials: (any InterstitialDelegate)?
    public var pickerCeremonies: Set<Ceremony>
    public var interstitialCeremonies: Set<Ceremony>

    public init(
        picker: (any AuthenticatorPicker)? = nil, interstitials: (any InterstitialDelegate)? = nil,
        pickerCeremonies: Set<Ceremony> = Set(Ceremony.allCases), interstitialCeremonies: Set<Ceremony> = Set(Ceremony.allCases)
    ) {
        self.picker = picker
        self.interstitials = interstitials
        self.pickerCeremonies = pickerCeremonies
        self.interstitialCeremonies = interstitialCeremonies
    }

    func picker(for ceremony: Ceremony) -> (any AuthenticatorPicker)? {
        pickerCeremonies.contains(ceremony) ? picker : nil
    }

    func interstitials(for ceremony: Ceremony) -> (any InterstitialDelegate)? {
        interstitialCeremonies.contains(ceremony) ? interstitials : nil
    }
}
