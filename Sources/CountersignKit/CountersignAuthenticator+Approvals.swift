import CountersignCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Approving and denying: find the requests waiting for this device (its inbox, a push, or the
/// live stream), open their details, and answer with a decision signed by the device key.
extension CountersignAuthenticator {
    /// The requests waiting for an answer, newest first: of one enrollment, or of every
    /// enrollment when `enrollmentID` is nil. When listing every enrollment, one the server has
    /// deregistered is removed from the device and left out.
    ///
    /// ```swift
    /// let inbox = try await authenticator.pendingRequests()
    /// ```
    public func pendingRequests(_ enrollmentID: Enrollment.ID? = nil) async throws(CountersignError) -> [ApprovalRequest] {
        let requests: [ApprovalRequest]
        if let enrollmentID {
            requests = try await inbox(of: enrollmentID)
        } else {
            var all: [ApprovalRequest] = []
            for enrollment in try await keyStore.enrollments() {
                do throws(CountersignError) {
                    all += try await inbox(of: enrollment.id)
                } catch where error.removesEnrollment {
                    continue
                }
            }
            requests = all
        }
        return requests.sorted { $0.createdAt > $1.createdAt }
    }

    /// The request a push notification announces. Nil when the push is not Countersign's, or is
    /// for a device not enrolled here; `.expired` when the push says the request has
    /// expired (without asking the server).
    ///
    /// ```swift
    /// func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
    ///     let userInfo = response.notification.request.content.userInfo
    ///     if let request = try? await authenticator.request(fromPushPayload: userInfo) { present(request) }
    /// }
    /// ```
    nonisolated(nonsending) public func request(
        fromPushPayload userInfo: [AnyHashable: Any]
    ) async throws(CountersignError) -> ApprovalRequest? {
        guard let payload = PushPayload(userInfo: userInfo), payload.event == .request else { return nil }
        return try await request(announcedBy: payload)
    }

    /// What a push (APNs `userInfo` or an FCM data map) tells this device: a new request, which
    /// is fetched as `request(fromPushPayload:)` does; that a request was answered on another
    /// device, so that its notification can be taken down (no network call then); or a security
    /// notice, fetched with the enrollment's notices. Nil for a push that is not Countersign's or
    /// names no enrollment here, and for a notice answered or expired meanwhile.
    ///
    /// ```swift
    /// switch try await authenticator.event(fromPushPayload: userInfo) {
    /// case .request(let request)?: present(request)
    /// case .closed(let requestID, _)?:
    ///     UNUserNotificationCenter.current().removeDeliveredNotifications(withIdentifiers: [requestID])
    /// case .notice(let notice)?: presentNotice(notice)   // notice.summary, and a "Not me" button
    /// case nil: break
    /// }
    /// ```
    nonisolated(nonsending) public func event(
        fromPushPayload userInfo: [AnyHashable: Any]
    ) async throws(CountersignError) -> PushEvent? {
        guard let payload = PushPayload(userInfo: userInfo) else { return nil }
        switch payload.event {
        case .request:
            return try await request(announcedBy: payload).map(PushEvent.request)
        case .closed:
            guard let enrollment = try await keyStore.enrollments().first(where: { $0.deviceID == payload.deviceID }) else {
                return nil
            }
            return .closed(requestID: payload.requestID, enrollmentID: enrollment.id)
        case .notice:
            guard let noticeID = payload.noticeID,
                  let enrollment = try await keyStore.enrollments().first(where: { $0.deviceID == payload.deviceID }),
                  Int64(now().timeIntervalSince1970) < payload.expiresAt else {
                return nil
            }
            return try await notices(enrollment.id).first { $0.id == noticeID && $0.reportedAt == nil }.map(PushEvent.notice)
        }
    }

    /// Opens a request's details with its enrollment's key and checks them. Nothing is sent to
    /// the server.
    ///
    /// ```swift
    /// let details = try await authenticator.details(for: request)
    /// print(details.clientName, details.bindingMessage ?? "", details.scope.joined(separator: " "))
    /// ```
    public func details(for request: ApprovalRequest) async throws(CountersignError) -> RequestDetails {
        let enrollment = try await keyStore.enrollment(request.enrollmentID)
        guard request.sealedDetails.hpkeSuite == .xwing else {
            let keys = try await keyStore.keys(for: request.enrollmentID)
            return try RequestDetails(opening: request, for: enrollment, with: keys.agreement.open)
        }
        // Sealed with the hybrid suite: this enrollment announced an X-Wing key, whose seed it kept.
        guard let seed = try await keyStore.factorMaterial(.xwingSeed, for: request.enrollmentID),
              let key = xwingKey(seed: seed) else {
            throw .invalidRequestDetails(ApprovalMessageError.cannotOpen.description)
        }
        return try RequestDetails(opening: request, for: enrollment, with: key.open)
    }

    /// One request sent to an enrollment, found by its id (from a link, or typed by the user).
    /// Throws `.alreadyAnswered` when it was approved or denied, here or on another device (the
    /// server does not say which, nor when), `.expired` when it expired unanswered, and
    /// `.requestNotFound` when the server sent no such request to this device, or has forgotten it.
    ///
    /// ```swift
    /// let request = try await authenticator.request("txn_01kjq4…", for: enrollment.id)
    /// ```
    public func request(_ requestID: String, for enrollmentID: Enrollment.ID) async throws(CountersignError) -> ApprovalRequest {
        try await withDevice(enrollmentID) { client throws(CountersignError) in
            guard let url = client.endpoints.request(requestID) else { throw .requestNotFound }
            let envelope = try await Self.refusalsOfApprovals { () async throws(CountersignError) in
                try await client.send(.get, url, expecting: PendingRequestEnvelope.self, what: "request")
            }
            guard envelope.id == requestID else {
                throw .invalidServerResponse("the server answered with another request than the one asked for")
            }
            return ApprovalRequest(enrollmentID: enrollmentID, envelope: envelope)
        }
    }

    /// Approves a request that asks only for a confirmation: signs the decision with the device
    /// key, over the digest of the details shown and the server's challenge, and sends it.
    /// Throws `.alreadyAnswered` when it was answered meanwhile (perhaps on another device),
    /// `.expired` when too late, and `.requestNotHandleable`, without sending anything, when the
    /// request requires another factor (answer those with `respond(toDetails:with:)`).
    ///
    /// ```swift
    /// let acknowledgement = try await authenticator.approve(details)
    /// print(acknowledgement.status)   // "approved"
    /// ```
    public func approve(_ details: RequestDetails) async throws(CountersignError) -> ApprovalAcknowledgement {
        guard details.requiredFactor == .confirm else { throw .requestNotHandleable }
        return try await submit(details, approving: .confirm).acknowledgement
    }

    /// Denies a request, whatever factor it requires; a denial needs none.
    ///
    /// ```swift
    /// let acknowledgement = try await authenticator.deny(details)
    /// print(acknowledgement.status)   // "denied"
    /// ```
    public func deny(_ details: RequestDetails) async throws(CountersignError) -> ApprovalAcknowledgement {
        try await submit(details, denying: nil).acknowledgement
    }

    /// Denies a request and says why: `declined`, `cancelled`, or `notRequested` to report a
    /// request the user did not make (possible fraud).
    ///
    /// ```swift
    /// _ = try await authenticator.deny(details, reason: .notRequested)
    /// ```
    public func deny(
        _ details: RequestDetails, reason: DenyReason
    ) async throws(CountersignError) -> ApprovalAcknowledgement {
        try await submit(details, denying: reason).acknowledgement
    }

    /// The live stream of one enrollment's requests. Nothing is sent until iteration starts;
    /// see `LiveRequests` for what it reports and when it ends.
    ///
    /// ```swift
    /// for try await event in authenticator.liveRequests(enrollment.id) {
    ///     if case .request(let request) = event { present(try await authenticator.details(for: request)) }
    /// }
    /// ```
    nonisolated public func liveRequests(_ enrollmentID: Enrollment.ID) -> LiveRequests {
        LiveRequests(enrollmentID: enrollmentID) { () async throws(CountersignError) in
            try await self.openLiveStream(enrollmentID)
        }
    }

    // MARK: - Plumbing

    private func inbox(of enrollmentID: Enrollment.ID) async throws(CountersignError) -> [ApprovalRequest] {
        try await withDevice(enrollmentID) { client throws(CountersignError) in
            try await client.send(.get, client.endpoints.requests, expecting: PendingRequestList.self, what: "inbox")
                .requests.map { ApprovalRequest(enrollmentID: enrollmentID, envelope: $0) }
        }
    }

    private func request(announcedBy payload: PushPayload) async throws(CountersignError) -> ApprovalRequest? {
        guard let enrollment = try await keyStore.enrollments().first(where: { $0.deviceID == payload.deviceID }) else {
            return nil
        }
        guard now().timeIntervalSince1970 < TimeInterval(payload.expiresAt) else { throw .expired }
        return try await request(payload.requestID, for: enrollment.id)
    }

    private func openLiveStream(_ enrollmentID: Enrollment.ID) async throws(CountersignError) -> AsyncThrowingStream<Data, any Error> {
        try await withDevice(enrollmentID) { client throws(CountersignError) in
            try await client.openEventStream(client.endpoints.requestStream)
        }
    }
}
