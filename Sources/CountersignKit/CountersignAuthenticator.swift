import CountersignCore
import Foundation

/// The authenticator side of Countersign: enrolls this device with a server from an enrollment
/// URI (usually a QR code) and manages its enrollments.
///
/// ```swift
/// let authenticator = CountersignAuthenticator(keyStore: KeychainKeyStore())
/// let enrollment = try await authenticator.enroll(
///     uri: scannedText, deviceName: "Ada's iPhone", platform: .ios,
///     push: PushRegistration(provider: .apns, token: apnsToken))
/// let status = try await authenticator.deviceStatus(enrollment.id)
/// ```
///
/// Every method throws `CountersignError`. A server that no longer knows an enrollment's device
/// answers with `.deviceDeregistered` (or `.userDeregistered`, `.userDisenrolled`, saying why),
/// and the enrollment is then removed from the device.
public actor CountersignAuthenticator {
    let keyStore: any KeyStore
    let transport: any HTTPTransport
    let biometricKeys: (any BiometricKeys)?
    let now: @Sendable () -> Date
    let hooks: AuthenticatorHooks
    /// X-Wing keys restored from their seeds, by seed: restoring one derives its ML-KEM key
    /// (about a third of opening a request's details). A key is used only for the seed the key
    /// store holds now, so one whose seed was deleted is never used.
    private var xwingKeys: [Data: XWingAgreementKey] = [:]

    /// - Parameters:
    ///   - keyStore: where keys and enrollment records live.
    ///   - transport: how requests reach the server.
    ///   - biometricKeys: the platform's keys for the `biometric` factor; without them an
    ///     enrollment has no biometric key.
    ///   - now: the clock that dates signed requests.
    ///   - hooks: the app's picker among alternatives and its screens between factors.
    public init(
        keyStore: any KeyStore, transport: any HTTPTransport = URLSessionTransport(),
        biometricKeys: (any BiometricKeys)? = nil, now: @escaping @Sendable () -> Date = Date.init,
        hooks: AuthenticatorHooks = AuthenticatorHooks()
    ) {
        self.keyStore = keyStore
        self.transport = transport
        self.biometricKeys = biometricKeys
        self.now = now
        self.hooks = hooks
    }

    /// The X-Wing key of `seed`, restored once; nil for a seed that is not one.
    func xwingKey(seed: Data) -> XWingAgreementKey? {
        if let key = xwingKeys[seed] { return key }
        guard let key = XWingAgreementKey(seed: seed) else { return nil }
        if xwingKeys.count >= 64 { xwingKeys.removeAll() }
        xwingKeys[seed] = key
        return key
    }

    /// Enrolls this device: generates its keys, proves possession of them to the server named in
    /// `uri` and stores the enrollment once the server's signed receipt checks out. If anything
    /// fails, the keys generated for it are deleted again.
    ///
    /// `factors` adds a PIN (only a random salt is kept; see `PINKey`), a biometric key (needs
    /// `biometricKeys`) and a TOTP seed (when the tenant offers them).
    ///
    /// ```swift
    /// let enrollment = try await authenticator.enroll(
    ///     uri: "countersign://enroll?v=1&server=https%3A%2F%2Fauth.example.com&ticket=cst_…&fp=…",
    ///     deviceName: "Work laptop", platform: .linux,
    ///     factors: EnrollmentFactors(pin: "4921", totp: true))
    /// ```
    public func enroll(
        uri: String, deviceName: String, platform: DevicePlatform, push: PushRegistration? = nil,
        factors: EnrollmentFactors = EnrollmentFactors()
    ) async throws(CountersignError) -> Enrollment {
        let parsed: EnrollmentURI
        do { parsed = try EnrollmentURI(parsing: uri) } catch { throw .invalidEnrollmentURI(error.description) }
        return try await enroll(
            server: parsed.server, credential: .ticket(parsed.ticket, serverKeyThumbprint: parsed.serverKeyThumbprint),
            deviceName: deviceName, platform: platform, push: push, factors: factors)
    }

    /// Enrolls this device for the user of `accessToken`: an access token of `server` with the
    /// scope `countersign:enroll`, which the app got by signing its user in with the authorization
    /// code flow and PKCE. No administrator's ticket is needed; the server binds the device to
    /// the token's user, and each token enrolls one device. `server` is the tenant's base URL
    /// (the token's issuer), reached over https.
    ///
    /// ```swift
    /// let enrollment = try await authenticator.enroll(
    ///     accessToken: tokens.accessToken, server: URL(string: "https://id.example.com")!,
    ///     deviceName: "Ada's iPhone", platform: .iOS)
    /// ```
    public func enroll(
        accessToken: String, server: URL, deviceName: String, platform: DevicePlatform, push: PushRegistration? = nil,
        factors: EnrollmentFactors = EnrollmentFactors()
    ) async throws(CountersignError) -> Enrollment {
        guard !accessToken.isEmpty, !accessToken.contains(where: \.isWhitespace) else {
            throw .invalidRequest("the access token is empty or malformed")
        }
        return try await enroll(server: server, credential: .accessToken(accessToken), deviceName: deviceName,
                                platform: platform, push: push, factors: factors)
    }

    private func enroll(
        server: URL, credential: EnrollmentExchange.Credential, deviceName: String, platform: DevicePlatform,
        push: PushRegistration?, factors: EnrollmentFactors
    ) async throws(CountersignError) -> Enrollment {
        guard let endpoints = DeviceEndpoints(server: server) else {
            throw .invalidEnrollmentURI("the server URL must not carry a query or a fragment")
        }
        guard let name = DeviceName.validate(deviceName) else { throw .invalidDeviceName }
        if let push { try Self.check(push) }
        if let pin = factors.pin { try PINKey.validate(pin) }
        if factors.biometric, biometricKeys == nil {
            throw .invalidRequest("this authenticator has no biometric keys to enroll")
        }
        var exchange = EnrollmentExchange(
            server: server, credential: credential, endpoints: endpoints, deviceName: name, platform: platform, push: push)

        let thumbprint = try await exchange.serverKeyThumbprint(over: transport)
        let material = try await factorMaterial(for: factors)
        exchange.factorKeys = material.keys
        let xwing = XWingAgreementKey.generate()
        exchange.factorKeys.xwing = xwing?.publicKey
        let enrollmentID = UUID().uuidString
        let keys = try await keyStore.createKeys(for: enrollmentID)
        do throws(CountersignError) {
            let accepted = try await exchange.perform(
                enrollmentID: enrollmentID, keys: keys, serverKeyThumbprint: thumbprint, transport: transport, now: now())
            try await keyStore.setFactorMaterial(material.pinSalt, as: .pinSalt, for: enrollmentID)
            try await keyStore.setFactorMaterial(material.biometricHandle, as: .biometricKey, for: enrollmentID)
            try await keyStore.setFactorMaterial(accepted.totpSeed?.encoded(), as: .totpSeed, for: enrollmentID)
            try await keyStore.setFactorMaterial(xwing?.seed, as: .xwingSeed, for: enrollmentID)
            try await keyStore.save(accepted.enrollment)
            return accepted.enrollment
        } catch {
            try? await keyStore.delete(enrollmentID)
            throw error
        }
    }

    /// The PIN salt and biometric handle to keep, and the public keys to send. The PIN key itself
    /// is dropped as soon as its public half is taken.
    func factorMaterial(
        for factors: EnrollmentFactors
    ) async throws(CountersignError) -> (keys: EnrollmentExchange.FactorKeys, pinSalt: Data?, biometricHandle: Data?) {
        var keys = EnrollmentExchange.FactorKeys(totp: factors.totp)
        var pinSalt: Data?
        var biometricHandle: Data?
        if let pin = factors.pin {
            let salt = PINKey.newSalt()
            keys.pin = ECPublicJWK(try PINKey(pin: pin, salt: salt).publicKey)
            pinSalt = salt
        }
        if factors.biometric, let biometricKeys {
            let key: BiometricKey
            do { key = try await biometricKeys.createKey() } catch {
                throw .invalidRequest("no biometric key can be created on this device (\(error))")
            }
            keys.biometric = ECPublicJWK(key.publicKey)
            biometricHandle = key.handle
        }
        return (keys, pinSalt, biometricHandle)
    }

    /// The enrollments on this device, oldest first.
    ///
    /// ```swift
    /// let accounts = try await authenticator.enrollments().map(\.user.username)
    /// ```
    public func enrollments() async throws(CountersignError) -> [Enrollment] {
        try await keyStore.enrollments()
    }

    /// Removes an enrollment at the server, then from this device. An enrollment the server has
    /// already forgotten is removed from the device without complaint; if the server cannot be
    /// reached, nothing is removed and the call can be repeated.
    ///
    /// ```swift
    /// try await authenticator.unenroll(enrollment.id)
    /// ```
    public func unenroll(_ enrollmentID: Enrollment.ID) async throws(CountersignError) {
        let client = try await deviceClient(for: enrollmentID)
        do throws(CountersignError) {
            _ = try await client.send(.delete, client.endpoints.device)
        } catch where error.removesEnrollment {
            // Already gone at the server; removing it here is all that is left to do.
        }
        try await keyStore.delete(enrollmentID)
    }

    /// The device's enrollment as the server holds it.
    ///
    /// ```swift
    /// let status = try await authenticator.deviceStatus(enrollment.id)
    /// if status.push?.valid == false { /* ask for a fresh push token */ }
    /// ```
    public func deviceStatus(_ enrollmentID: Enrollment.ID) async throws(CountersignError) -> DeviceDescription {
        try await withDevice(enrollmentID) { client throws(CountersignError) in
            try await client.send(.get, client.endpoints.device, expecting: DeviceDescription.self, what: "device description")
        }
    }

    /// Renames the device at the server and in the local record.
    ///
    /// ```swift
    /// let status = try await authenticator.rename(enrollment.id, to: "Ada's new iPhone")
    /// ```
    public func rename(_ enrollmentID: Enrollment.ID, to name: String) async throws(CountersignError) -> DeviceDescription {
        guard let name = DeviceName.validate(name) else { throw .invalidDeviceName }
        let (description, enrollment) = try await withDevice(enrollmentID) { client throws(CountersignError) in
            let description = try await client.send(
                .patch, client.endpoints.device, json: DeviceRename(name: name),
                expecting: DeviceDescription.self, what: "device description")
            return (description, client.enrollment)
        }
        var renamed = enrollment
        renamed.deviceName = description.name
        try await keyStore.save(renamed)
        return description
    }

    /// Registers the push channel the server reaches this device on, replacing any earlier one;
    /// `nil` removes it (the device then only sees requests when it asks for them).
    ///
    /// ```swift
    /// let status = try await authenticator.updatePushToken(
    ///     enrollment.id, to: PushRegistration(provider: .apns, token: newToken))
    /// ```
    public func updatePushToken(
        _ enrollmentID: Enrollment.ID, to push: PushRegistration?
    ) async throws(CountersignError) -> DeviceDescription {
        if let push { try Self.check(push) }
        return try await withDevice(enrollmentID) { client throws(CountersignError) in
            if let push {
                try await client.send(
                    .put, client.endpoints.pushToken, json: push, expecting: DeviceDescription.self,
                    what: "device description")
            } else {
                try await client.send(
                    .delete, client.endpoints.pushToken, expecting: DeviceDescription.self, what: "device description")
            }
        }
    }

    // MARK: - Plumbing

    func deviceClient(for enrollmentID: Enrollment.ID) async throws(CountersignError) -> DeviceClient {
        let enrollment = try await keyStore.enrollment(enrollmentID)
        let keys = try await keyStore.keys(for: enrollmentID)
        return try DeviceClient(enrollment: enrollment, signer: keys.signer, transport: transport, now: now)
    }

    /// Runs `operation` with the enrollment's client. When the server says it no longer knows the
    /// device, the enrollment is useless: it is deleted here before the error is passed on. A
    /// `user_deregistered` refusal without a signed notice is confirmed first with a signed
    /// request of the device's own, whose answer must carry one.
    func withDevice<Result: Sendable>(
        _ enrollmentID: Enrollment.ID, _ operation: (DeviceClient) async throws(CountersignError) -> Result
    ) async throws(CountersignError) -> Result {
        let client = try await deviceClient(for: enrollmentID)
        do throws(CountersignError) {
            do {
                return try await operation(client)
            } catch .server(_, DeviceErrorCode.userDeregistered.rawValue, _) {
                _ = try await client.send(.get, client.endpoints.device)
                throw .invalidServerResponse("the server said the enrollment was removed, yet still knows the device")
            }
        } catch where error.removesEnrollment {
            try? await keyStore.delete(enrollmentID)
            throw error
        }
    }

    private static func check(_ push: PushRegistration) throws(CountersignError) {
        guard !push.token.isEmpty, push.token.unicodeScalars.count <= PushRegistration.maximumTokenLength else {
            throw .invalidRequest("a push token must be 1 to \(PushRegistration.maximumTokenLength) characters")
        }
    }
}
