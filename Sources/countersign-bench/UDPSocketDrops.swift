import Foundation

/// Datagrams the kernel dropped at UDP sockets of this host because their receive buffer was
/// full, by local port: the `drops` column of `/proc/net/udp` (Linux). They never reach the
/// program, so the server's own counters do not show them.
enum UDPSocketDrops {
    /// The drops so far at the sockets bound to `ports`; nil where there is no such file.
    static func read(ports: Set<Int>) -> [Int: Int]? {
        guard let text = try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8) else { return nil }
        var drops: [Int: Int] = [:]
        // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ref pointer drops
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count >= 13, let colon = fields[1].lastIndex(of: ":"),
                  let port = Int(fields[1][fields[1].index(after: colon)...], radix: 16), ports.contains(port),
                  let count = fields.last.flatMap({ Int($0) }) else { continue }
            drops[port, default: 0] += count
        }
        return drops
    }
}
