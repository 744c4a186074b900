import AuthenticationServices
import AuthenticatorAppModel
import CountersignCore
import CountersignKit
import UIKit

/// Adding an account: scan the QR code from the account page or the help desk, paste the link,
/// or sign in at the organisation's server and enroll with the access token (code + PKCE in an
/// `ASWebAuthenticationSession`).
final class EnrollViewController: UIViewController, @preconcurrency ASWebAuthenticationPresentationContextProviding {
    private let services = AppServices.shared

    override func viewDidLoad() {
        super.viewDidLoad()
        title = "Add Account"
        view.backgroundColor = .systemBackground
        let stack = UIStackView(arrangedSubviews: [
            button("Scan QR Code", "qrcode.viewfinder") { [weak self] in await self?.scan() },
            button("Paste Link", "doc.on.clipboard") { [weak self] in
                await self?.enroll(text: UIPasteboard.general.string ?? "")
            },
            button("Sign In", "person.badge.key") { [weak self] in await self?.signIn() },
        ])
        stack.axis = .vertical
        stack.spacing = 16
        stack.translatesAutoresizingMaskIntoConstraints = false
        view.addSubview(stack)
        NSLayoutConstraint.activate([
            stack.leadingAnchor.constraint(equalTo: view.layoutMarginsGuide.leadingAnchor),
            stack.trailingAnchor.constraint(equalTo: view.layoutMarginsGuide.trailingAnchor),
            stack.centerYAnchor.constraint(equalTo: view.centerYAnchor),
        ])
    }

    private func button(_ title: String, _ image: String, action: @escaping @MainActor () async -> Void) -> UIButton {
        var configuration = UIButton.Configuration.bordered()
        configuration.title = title
        configuration.image = UIImage(systemName: image)
        configuration.imagePadding = 8
        return UIButton(configuration: configuration, primaryAction: UIAction { _ in Task { await action() } })
    }

    private func scan() async {
        guard let text = await QRScannerViewController.scan(from: self) else { return }
        await enroll(text: text)
    }

    /// Reads the link, names its server, and enrolls once the user agrees.
    func enroll(text: String) async {
        let link: EnrollmentLink
        switch EnrollmentLink.read(text) {
        case .success(let read): link = read
        case .failure(let problem):
            if await show(problem), problem.nextStep == .scanAgain { await scan() }
            return
        }
        guard await choose(title: "Add account?", message: "This phone will approve sign-ins at \(link.serverName).",
                           actions: ["Add"]) != nil else { return }
        await finishEnrollment { () async throws(CountersignError) -> Enrollment in
            try await self.services.authenticator.enroll(
                uri: link.uri, deviceName: EnrollmentLink.deviceName(from: UIDevice.current.name), platform: .ios,
                push: self.services.pushRegistration, factors: await self.factors())
        }
    }

    /// Signs in at a server the user names, then enrolls with the access token.
    private func signIn() async {
        guard !AppServices.clientID.isEmpty else {
            await show(ProblemMessage(title: "Sign-in not set up",
                                      explanation: "This build of the app has no client id (CountersignClientID in Info.plist). Scan a QR code instead.",
                                      nextStep: .scanAgain))
            return
        }
        guard let address = await askText(title: "Sign in", message: "Your organisation's sign-in address.",
                                          placeholder: "https://id.example.com"),
              let server = URL(string: address.trimmingCharacters(in: .whitespaces)), server.scheme == "https" else { return }
        let signIn = NativeSignIn(server: server, clientID: AppServices.clientID)
        do {
            let attempt = try await signIn.begin(redirectURI: AppServices.redirectURI)
            let callback = try await authenticate(attempt.url)
            let token = try await signIn.accessToken(from: callback, for: attempt)
            await finishEnrollment { () async throws(CountersignError) -> Enrollment in
                try await self.services.authenticator.enroll(
                    accessToken: token, server: server, deviceName: EnrollmentLink.deviceName(from: UIDevice.current.name),
                    platform: .ios, push: self.services.pushRegistration, factors: await self.factors())
            }
        } catch let failure as NativeSignIn.Failure {
            await show(ProblemMessage(title: "Sign-in failed", explanation: failure.description + ".", nextStep: .tryAgain))
        } catch ASWebAuthenticationSessionError.canceledLogin {
            return
        } catch {
            await show(ProblemMessage(title: "Can't reach the server", explanation: error.localizedDescription, nextStep: .tryAgain))
        }
    }

    /// The browser sheet; the URL the server sent it back to.
    private func authenticate(_ url: URL) async throws -> URL {
        try await withCheckedThrowingContinuation { continuation in
            let scheme = URL(string: AppServices.redirectURI)?.scheme
            let session = ASWebAuthenticationSession(url: url, callbackURLScheme: scheme) { callback, error in
                if let callback { continuation.resume(returning: callback) } else {
                    continuation.resume(throwing: error ?? ASWebAuthenticationSessionError(.canceledLogin))
                }
            }
            session.presentationContextProvider = self
            session.prefersEphemeralWebBrowserSession = true
            session.start()
        }
    }

    func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor {
        view.window ?? ASPresentationAnchor()
    }

    /// A PIN (asked twice) and, where the phone has them, Face ID or Touch ID; one-time codes
    /// where the server offers them.
    private func factors() async -> EnrollmentFactors {
        let pin: String?
        switch await PINPadViewController.ask(PINEntry(reason: .setUp), from: self) {
        case .pin(let chosen): pin = chosen
        case .cancel: pin = nil
        }
        let biometry = await SecureEnclaveBiometricKeys().biometry
        return EnrollmentFactors(pin: pin, biometric: biometry != nil, totp: true)
    }

    /// Shows the number until the other phone approves (checked every two seconds), or says
    /// that it refused.
    private func waitForApproval(_ enrollment: Enrollment, showing handover: EnrollmentHandover) async {
        let alert = UIAlertController(
            title: handover.number, message: HandoverScreen.waitingText(handover), preferredStyle: .alert)
        present(alert, animated: true)
        while true {
            do throws(CountersignError) {
                if try await services.authenticator.checkHandover(enrollment.id) { break }
            } catch {
                alert.dismiss(animated: true)
                await show(ProblemMessage(error))
                return
            }
            try? await Task.sleep(for: .seconds(2))
        }
        alert.dismiss(animated: true)
        await choose(title: "Account added", message: "This phone now approves sign-ins for \(enrollment.user.username).",
                     actions: ["Done"], cancel: nil)
        navigationController?.popViewController(animated: true)
    }

    private func finishEnrollment(_ enroll: @escaping @MainActor () async throws(CountersignError) -> Enrollment) async {
        do {
            let enrollment = try await enroll()
            if let handover = enrollment.handover {
                // Moved from another phone: that phone approves this one by the number shown here.
                await waitForApproval(enrollment, showing: handover)
                return
            }
            await choose(title: "Account added", message: "This phone now approves sign-ins for \(enrollment.user.username).",
                         actions: ["Done"], cancel: nil)
            navigationController?.popViewController(animated: true)
        } catch {
            await show(ProblemMessage(error))
        }
    }
}
