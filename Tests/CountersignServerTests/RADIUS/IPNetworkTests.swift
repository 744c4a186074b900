import Testing
@testable import CountersignServer

/// The CIDR networks a RADIUS client's requests may come from, as an administrator writes them.
@Suite("IP networks")
struct IPNetworkTests {
    @Test("networks and single addresses, IPv4 and IPv6, and what they contain")
    func parsing() throws {
        let office = try IPNetwork("192.0.2.0/24")
        #expect(office.description == "192.0.2.0/24")
        #expect(office.contains([192, 0, 2, 77]) && !office.contains([192, 0, 3, 1]))
        #expect(try IPNetwork("203.0.113.9").description == "203.0.113.9/32")
        let six = try IPNetwork("2001:db8::/32")
        #expect(six.description == "2001:db8::/32")
        #expect(six.contains(try #require(IPNetwork.address("2001:db8:1::5"))))
        #expect(!six.contains([192, 0, 2, 1]))
        #expect(try IPNetwork("0.0.0.0/0").contains([8, 8, 8, 8]))
        // An IPv4-mapped network is its IPv4 network, as a dual-stack socket reports a source.
        #expect(try IPNetwork("::ffff:192.0.2.0/120") == office)
        #expect(IPNetwork.address("::ffff:192.0.2.7") == [192, 0, 2, 7])
    }

    @Test("refused: no address, a prefix that is not a plain number in range, host bits set",
          arguments: ["vpn.example.com", "192.0.2.0/33", "192.0.2.0/+8", "10.0.0.0/08", "0.0.0.0/-0", "192.0.2.0/",
                      "192.0.2.1/24", "2001:db8::1/32", "::ffff:192.0.2.0/95", "192.0.2.0/24/1", "192.0.2.0 /24"])
    func refused(text: String) {
        #expect(throws: IPNetworkError.self) { try IPNetwork(text) }
    }

    @Test("overlap: one network inside another, not neighbours or the other family")
    func overlaps() throws {
        #expect(try IPNetwork("10.0.0.0/8").overlaps(try IPNetwork("10.1.2.0/24")))
        #expect(try IPNetwork("10.1.2.3").overlaps(try IPNetwork("10.1.2.0/24")))
        #expect(try !IPNetwork("10.1.2.0/24").overlaps(try IPNetwork("10.1.3.0/24")))
        #expect(try !IPNetwork("0.0.0.0/0").overlaps(try IPNetwork("::/0")))
    }
}
