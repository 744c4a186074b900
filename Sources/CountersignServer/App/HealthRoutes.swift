import Foundation
import Hummingbird

/// Liveness, readiness and metrics, for load balancers and Prometheus.
struct HealthRoutes: Sendable {
    /// Ready means the database answers.
    let database: any Database
    let metrics: ServerMetrics

    func register(on router: Router<CountersignRequestContext>) {
        router.get("/healthz") { _, _ in
            try JSON.response(["status": "ok"])
        }
        router.get("/readyz") { _, _ in
            let ready = await database.ping()
            return try JSON.response(["status": ready ? "ready" : "database unavailable"],
                                     status: ready ? .ok : .serviceUnavailable)
        }
        router.get("/metrics") { _, _ in
            if let bytes = await database.pageCacheBytes() { metrics.pageCache.set(bytes) }
            if let statements = await database.statementNames() { metrics.record(statements) }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
    }
}
