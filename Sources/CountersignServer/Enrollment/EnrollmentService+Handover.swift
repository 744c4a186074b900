import CountersignCore
import Crypto
import Foundation

/// Handing over to a new device (docs/recovery.md §8): a device of the user asks for an
/// enrollment URI, the new device enrolls with it and is kept pending while it shows a
/// two-digit number, and the first device approves it by picking that number among three. The
/// new device's receipt names the device that vouched for it; the first device may ask to be
/// removed once it approves.
extension EnrollmentService {
    /// Issues the handover's ticket, for 10 minutes, to an active device.
    func startHandover(from device: Device, tenant: Tenant, retire: Bool) async throws -> HandoverState {
        let date = now()
        try await expireHandovers(at: date)
        let secret = Secrets.generate(prefix: EnrollmentTicket.secretPrefix)
        let ticket = EnrollmentTicket(
            id: Identifier.make("tkt", at: date), tenantID: tenant.id, userID: device.userID,
            createdBy: "device:\(device.id)", createdAt: date, expiresAt: date.addingTimeInterval(Handover.lifetime))
        let handover = Handover(
            id: Identifier.make("hov", at: date), tenantID: tenant.id, userID: device.userID, ticketID: ticket.id,
            fromDeviceID: device.id, retire: retire, status: .waiting, newDeviceID: nil, matchNumber: nil, createdAt: date,
            expiresAt: ticket.expiresAt)
        try await store.startHandover(handover, ticket: ticket, secretHash: Secrets.hash(secret), at: date)
        guard let server = URL(string: origin.tenantBase(tenant)) else {
            throw StorageError.corrupt("the public URL is not a URL")
        }
        var state = try await state(of: handover)
        state.enrollmentURI = EnrollmentURI(
            server: server, ticket: secret, serverKeyThumbprint: tenant.signingKey.thumbprint).description
        return state
    }

    /// The handover as the device that started it sees it.
    func handoverState(_ id: String, for device: Device) async throws -> HandoverState {
        try await state(of: try await openHandover(id, for: device))
    }

    /// Approves with the number the new device shows: the right one makes it active; a wrong
    /// one refuses the handover and removes the new device (403 `wrong_number`).
    func approveHandover(_ id: String, number: String, by device: Device) async throws -> HandoverState {
        let handover = try await openHandover(id, for: device)
        guard number.count == 2, number.allSatisfy(\.isASCII), number.allSatisfy(\.isNumber) else {
            throw HandoverError.invalidNumber
        }
        guard handover.status == .awaitingApproval, let expected = handover.matchNumber else { throw HandoverError.closed }
        let date = now()
        guard number == expected else {
            _ = try await store.close(handover, as: .denied, actor: "device:\(device.id)", at: date)
            throw HandoverError.wrongNumber
        }
        guard try await store.approve(handover, at: date) else { throw HandoverError.closed }
        return try await state(of: try await store.handover(id: id) ?? handover)
    }

    /// Refuses: the new device, if one enrolled, is removed, and the URI can no longer be used.
    func denyHandover(_ id: String, by device: Device) async throws -> HandoverState {
        let handover = try await openHandover(id, for: device)
        guard try await store.close(handover, as: .denied, actor: "device:\(device.id)", at: now()) else {
            throw HandoverError.closed
        }
        return try await state(of: try await store.handover(id: id) ?? handover)
    }

    /// The device's own handover, once its time has been checked: one that ran out is closed
    /// (its new device removed) and answered 410.
    private func openHandover(_ id: String, for device: Device) async throws -> Handover {
        guard let handover = try await store.handover(id: id), handover.fromDeviceID == device.id,
              handover.tenantID == device.tenantID else {
            throw HandoverError.unknown
        }
        if [.waiting, .awaitingApproval].contains(handover.status), handover.expiresAt <= now() {
            _ = try await store.close(handover, as: .expired, actor: "system", at: now())
            throw HandoverError.expired
        }
        return handover
    }

    /// Closes the open handovers whose time ran out (at most hourly, when a handover starts).
    private func expireHandovers(at date: Date) async throws {
        guard handoverHousekeeping.isDue(at: date) else { return }
        for handover in try await store.expiredHandovers(before: date) {
            _ = try await store.close(handover, as: .expired, actor: "system", at: date)
        }
    }

    private func state(of handover: Handover) async throws -> HandoverState {
        var newDevice: HandoverState.NewDevice?
        if let id = handover.newDeviceID, let device = try await store.device(id: id) {
            newDevice = HandoverState.NewDevice(deviceID: device.id, name: device.name, platform: device.platform)
        }
        let choices = handover.status == .awaitingApproval
            ? handover.matchNumber.map { Self.choices(including: $0, handover: handover.id) } : nil
        return HandoverState(
            id: handover.id, status: HandoverState.Status(rawValue: handover.status.rawValue) ?? .expired,
            retire: handover.retire, expiresAt: handover.expiresAt, enrollmentURI: nil, newDevice: newDevice,
            choices: choices)
    }

    /// Three distinct two-digit numbers, `number` among them, the same at every call: a device
    /// that asks twice must not learn the number from what changes.
    static func choices(including number: String, handover: String) -> [String] {
        var stream = Array(SHA256.hash(data: Data("\(handover):\(number)".utf8)))
        var choices = [number]
        var index = 0
        while choices.count < 3 {
            if index == stream.count {
                stream = Array(SHA256.hash(data: Data(stream)))
                index = 0
            }
            let candidate = String(NumberMatching.range.lowerBound + Int64(stream[index]) % 90)
            index += 1
            if !choices.contains(candidate) { choices.append(candidate) }
        }
        return choices.sorted()
    }
}

/// Why a handover call was refused.
enum HandoverError: Error, Sendable, Equatable, APIFailure {
    case unknown, closed, expired, wrongNumber, invalidNumber

    var apiError: APIError {
        switch self {
        case .unknown: APIError(.notFound, .unknownHandover, "this device started no such handover")
        case .closed: APIError(.conflict, .handoverClosed, "the handover has no new device to approve, or was closed already")
        case .expired: APIError(.gone, .handoverExpired, "the handover's time ran out; start a new one")
        case .wrongNumber:
            APIError(.forbidden, .wrongNumber,
                     "that is not the number the new device shows; the handover is refused and the new device removed")
        case .invalidNumber: APIError(.badRequest, .invalidRequest, "number must be the two digits the new device shows")
        }
    }
}
