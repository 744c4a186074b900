import ServiceLifecycle

/// The run loop of an outbox dispatcher: it works batches, and when there is nothing to claim it
/// sleeps until `wakeup` is signalled (this node queued rows) or `pollInterval` passes (rows
/// queued by other nodes, or retries come due). A graceful shutdown closes the wakeup: sleeping
/// workers return at once and start no new batch, while a batch in flight is sent and recorded.
struct OutboxDispatchLoop: Sendable {
    enum Workers: Sendable {
        /// One worker, which sleeps after any batch that was not full: the due rows are drained.
        case one
        /// Several workers, so that one batch is on the wire while another is being claimed or
        /// recorded. A worker claims again until it finds nothing. Only the first polls the
        /// database when idle; the others sleep until a worker finds a full batch (more is
        /// waiting) and wakes one of them.
        case pool(Int)
    }

    let wakeup: PushWakeup
    let workers: Workers
    let batchSize: Int
    let pollInterval: Duration

    /// Runs `batch` (which claims, sends and records one batch, and returns how many rows it
    /// claimed) until the service is shut down or cancelled.
    func run(_ batch: @escaping @Sendable () async -> Int) async {
        await withGracefulShutdownHandler {
            switch workers {
            case .one:
                while !Task.isShuttingDownGracefully && !Task.isCancelled {
                    if await batch() < batchSize {
                        await wakeup.wait(upTo: pollInterval)
                    }
                }
            case .pool(let count):
                await withTaskGroup(of: Void.self) { group in
                    for worker in 0..<max(1, count) {
                        group.addTask {
                            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                                let claimed = await batch()
                                if claimed >= batchSize {
                                    wakeup.signal()
                                } else if claimed == 0 {
                                    await wakeup.wait(upTo: worker == 0 ? pollInterval : nil)
                                }
                            }
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            wakeup.close()
        }
    }
}
