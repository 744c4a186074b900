import Foundation

/// The dashboard's charts: the last 24 hours of `GET …/statistics`, one bar chart per count,
/// drawn as SVG on the server (no script; the page's policy allows none inline anyway).
struct ConsoleChart: Sendable {
    struct Bar: Sendable {
        let x: Int, y: Int, width: Int, height: Int
        let label: String
    }

    let id: String
    let title: String
    let total: Int64
    let maximum: Int64
    let bars: [Bar]
    let width = ConsoleChart.width
    let height = ConsoleChart.height
    let axisY = ConsoleChart.height - 1
    let firstHour: String
    let lastHour: String

    static let width = 480
    static let height = 120

    /// A chart of `member` over `buckets` (API bucket objects, oldest first).
    init(id: String, title: String, member: String, buckets: [[String: Any]]) {
        self.id = id
        self.title = title
        let values = buckets.map { ($0[member] as? NSNumber)?.int64Value ?? 0 }
        let hours = buckets.map { ConsoleTime.text($0["start"] as? String) }
        total = values.reduce(0, +)
        maximum = values.max() ?? 0
        let slot = Self.width / max(values.count, 1)
        let scale = Double(Self.height - 4) / Double(max(maximum, 1))
        bars = values.enumerated().map { index, value in
            let height = value == 0 ? 0 : max(2, Int((Double(value) * scale).rounded()))
            return Bar(x: index * slot + 1, y: Self.height - 1 - height, width: max(slot - 2, 1), height: height,
                       label: "\(hours[index]): \(value)")
        }
        firstHour = hours.first ?? ""
        lastHour = hours.last ?? ""
    }

    static func charts(_ statistics: [String: Any]?) -> [ConsoleChart] {
        let buckets = statistics?["buckets"] as? [[String: Any]] ?? []
        return [
            ("requests", "Requests", "requests"), ("approved", "Approved", "approved"), ("denied", "Denied", "denied"),
            ("expired", "Expired", "expired"), ("push-failures", "Push failures", "push_failures"),
        ].map { ConsoleChart(id: $0.0, title: $0.1, member: $0.2, buckets: buckets) }
    }
}
