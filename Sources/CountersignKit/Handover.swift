import CountersignCore
import Foundation

/// Moving to a new device without an administrator: this device asks for an enrollment URI for
/// the same user, the new device enrolls with it and shows a two-digit number, and this device
/// approves it by picking that number among three (docs/sdk.md §6).
extension CountersignAuthenticator {
    /// Asks for a handover URI for `enrollmentID`'s user, valid ten minutes: show it as a QR code
    /// (`enrollmentURI`) for the new device to scan. With `retireThisDevice`, this enrollment is
    /// removed, here and at the server, once the new device is approved.
    ///
    /// ```swift
    /// let handover = try await authenticator.startHandover(enrollment.id)
    /// showQRCode(handover.enrollmentURI ?? "")
    /// ```
    public func startHandover(
        _ enrollmentID: Enrollment.ID, retireThisDevice: Bool = false
    ) async throws(CountersignError) -> HandoverState {
        try await withDevice(enrollmentID) { client throws(CountersignError) in
            let state = try await Self.refusalsOfHandovers { () async throws(CountersignError) in
                try await client.send(
                    .post, client.endpoints.handovers, json: HandoverStart(retire: retireThisDevice),
                    expecting: HandoverState.self, what: "handover")
            }
            guard state.enrollmentURI != nil, state.status == .waiting else {
                throw .invalidServerResponse("the server started a handover without an enrollment URI")
            }
            return state
        }
    }

    /// The handover as the server holds it: `awaitingApproval` once the new device enrolled,
    /// with its name and the three numbers to pick from.
    public func handover(_ id: String, of enrollmentID: Enrollment.ID) async throws(CountersignError) -> HandoverState {
        try await withDevice(enrollmentID) { client throws(CountersignError) in
            guard let url = client.endpoints.handover(id) else { throw .handoverNotFound }
            return try await Self.refusalsOfHandovers { () async throws(CountersignError) in
                try await client.send(.get, url, expecting: HandoverState.self, what: "handover")
            }
        }
    }

    /// Approves the new device with the number it shows. A wrong number throws `.wrongNumber`:
    /// the server refused the handover and removed the new device. With a handover that retires
    /// this device, its enrollment is removed here once approved.
    ///
    /// ```swift
    /// let state = try await authenticator.approveHandover(handover.id, number: "47", of: enrollment.id)
    /// ```
    public func approveHandover(
        _ id: String, number: String, of enrollmentID: Enrollment.ID
    ) async throws(CountersignError) -> HandoverState {
        let state = try await withDevice(enrollmentID) { client throws(CountersignError) in
            guard let url = client.endpoints.handover(id, "approve") else { throw .handoverNotFound }
            return try await Self.refusalsOfHandovers { () async throws(CountersignError) in
                try await client.send(
                    .post, url, json: HandoverApproval(number: number), expecting: HandoverState.self, what: "handover")
            }
        }
        if state.status == .approved, state.retire { try await keyStore.delete(enrollmentID) }
        return state
    }

    /// Refuses the handover: the new device, if one enrolled, is removed, and the URI is void.
    public func denyHandover(_ id: String, of enrollmentID: Enrollment.ID) async throws(CountersignError) -> HandoverState {
        try await withDevice(enrollmentID) { client throws(CountersignError) in
            guard let url = client.endpoints.handover(id, "deny") else { throw .handoverNotFound }
            return try await Self.refusalsOfHandovers { () async throws(CountersignError) in
                try await client.send(.post, url, expecting: HandoverState.self, what: "handover")
            }
        }
    }

    /// On the new device: whether the device that vouched for this enrollment has approved it.
    /// Once it has, the enrollment's `handover` is cleared and it works as any other; while it
    /// has not, show `enrollment.handover.number`. A refused or expired handover throws
    /// `.deviceDeregistered` (the enrollment is removed here).
    ///
    /// ```swift
    /// while try await !authenticator.checkHandover(enrollment.id) { try await Task.sleep(for: .seconds(2)) }
    /// ```
    public func checkHandover(_ enrollmentID: Enrollment.ID) async throws(CountersignError) -> Bool {
        var enrollment = try await keyStore.enrollment(enrollmentID)
        guard enrollment.handover != nil else { return true }
        let status = try await deviceStatus(enrollmentID)
        guard status.status == "active" else { return false }
        enrollment.handover = nil
        try await keyStore.save(enrollment)
        return true
    }

    static func refusalsOfHandovers<Result>(
        _ call: () async throws(CountersignError) -> Result
    ) async throws(CountersignError) -> Result {
        do {
            return try await call()
        } catch {
            guard case .server(_, let code, _) = error else { throw error }
            switch DeviceErrorCode(rawValue: code) {
            case .unknownHandover: throw .handoverNotFound
            case .handoverClosed: throw .handoverClosed
            case .handoverExpired: throw .handoverExpired
            case .wrongNumber: throw .wrongNumber
            default: throw error
            }
        }
    }
}
