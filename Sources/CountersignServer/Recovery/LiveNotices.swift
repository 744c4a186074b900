import CountersignCore

/// Sends a security notice down the live streams of the devices it is shown to
/// (`GET /device/v1/requests/stream`, event `notice`), so that a device without push, or one
/// whose push is late, tells its user at once. Nothing goes out before the transaction that
/// records the notice commits, so a device that asks for it then finds it: this node's streams
/// are told after the commit (`SQLExecutor.afterCommit`), the other nodes' through the cluster
/// relay, whose NOTIFY PostgreSQL delivers on commit too. A notice recorded in a transaction
/// that rolls back is never sent.
struct LiveNotices: Sendable {
    let events: ApprovalEvents
    let relay: ClusterRelay

    func announce(_ notice: SecurityNoticeList.Item, to deviceIDs: [String], on executor: any SQLExecutor) async throws {
        guard !deviceIDs.isEmpty else { return }
        let events = events
        executor.afterCommit {
            for deviceID in deviceIDs { events.publish(.notice(notice), to: deviceID) }
        }
        try await relay.announceNotice(notice.id, deviceIDs: deviceIDs, on: executor)
    }
}
