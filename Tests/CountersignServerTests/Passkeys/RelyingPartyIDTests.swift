import Foundation
import Testing
@testable import CountersignServer

/// A tenant's own passkey RP ID must be one browsers accept at the server's public URL
/// (WebAuthn Level 3 §5.1.3, HTML's "is a registrable domain suffix of or is equal to"): its
/// host or a parent of it, never a public suffix, never at an IP address. The suffixes are the
/// system's Public Suffix List (`/usr/share/publicsuffix/public_suffix_list.dat`).
@Suite("Passkeys: the RP ID a tenant may set")
struct RelyingPartyIDTests {
    @Test("An RP ID browsers accept at the public URL is kept",
          arguments: [
            ("https://auth.example.com", "auth.example.com"),
            ("https://auth.example.com", "example.com"),
            ("https://login.auth.example.com:8443", "example.com"),
            ("https://auth.example.co.uk", "example.co.uk"),
            // 公司.cn, a public suffix written in Chinese, as browsers compare it: in A-labels.
            ("https://login.bank.xn--55qx5d.cn", "bank.xn--55qx5d.cn"),
            ("https://me.github.io", "me.github.io"),
            // A loopback address is served as localhost.
            ("http://127.0.0.1:8080", "localhost"),
          ])
    func acceptedRPID(publicURL: String, rpID: String) async throws {
        try await TestServer.routed(configure: { $0.publicURL = URL(string: publicURL) }) { server in
            let answer = try await server.admin(
                "PUT", "/admin/v1/tenants/default/authentication-policy", json: ["passkeys": ["rp_id": rpID]])
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
            #expect((answer["passkeys"] as? [String: any Sendable])?["rp_id"] as? String == rpID)
        }
    }

    @Test("An RP ID browsers would refuse is 400 naming passkeys.rp_id and why, and changes nothing",
          arguments: [
            ("https://auth.example.com", "evil.example",
             "evil.example is neither the server's host, auth.example.com, nor a parent domain of it: browsers would refuse every passkey ceremony"),
            ("https://auth.example.com", "sub.auth.example.com",
             "sub.auth.example.com is neither the server's host, auth.example.com, nor a parent domain of it: browsers would refuse every passkey ceremony"),
            ("https://auth.example.com", "xample.com",
             "xample.com is neither the server's host, auth.example.com, nor a parent domain of it: browsers would refuse every passkey ceremony"),
            ("https://auth.example.com", "com",
             "com is a public suffix, under which anyone may register a domain, which browsers refuse as an RP ID: use auth.example.com or a parent of it below its public suffix"),
            ("https://auth.example.co.uk", "co.uk",
             "co.uk is a public suffix, under which anyone may register a domain, which browsers refuse as an RP ID: use auth.example.co.uk or a parent of it below its public suffix"),
            ("https://login.bank.xn--55qx5d.cn", "xn--55qx5d.cn",
             "xn--55qx5d.cn is a public suffix, under which anyone may register a domain, which browsers refuse as an RP ID: use login.bank.xn--55qx5d.cn or a parent of it below its public suffix"),
            // The private part of the list counts as browsers count it.
            ("https://me.github.io", "github.io",
             "github.io is a public suffix, under which anyone may register a domain, which browsers refuse as an RP ID: use me.github.io or a parent of it below its public suffix"),
            ("http://127.0.0.1:8080", "127.0.0.1",
             "127.0.0.1 is neither the server's host, localhost, nor a parent domain of it: browsers would refuse every passkey ceremony"),
            ("https://203.0.113.7", "203.0.113.7",
             "the server's public URL is at an IP address (203.0.113.7), where browsers allow no passkey: serve it at a domain name"),
            ("https://[2001:db8::7]", "example.com",
             "the server's public URL is at an IP address ([2001:db8::7]), where browsers allow no passkey: serve it at a domain name"),
          ])
    func refusedRPID(publicURL: String, rpID: String, reason: String) async throws {
        try await TestServer.routed(configure: { $0.publicURL = URL(string: publicURL) }) { server in
            let answer = try await server.admin(
                "PUT", "/admin/v1/tenants/default/authentication-policy",
                json: ["passkeys": ["rp_id": rpID], "user_requests_per_minute": 7])
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_request")
            #expect(answer.errorDescription == "field passkeys.rp_id is invalid: \(reason)")
            let policy = try await server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            #expect((policy["passkeys"] as? [String: any Sendable])?["rp_id"] == nil)
            #expect(policy["user_requests_per_minute"] as? Int != 7, "nothing of the refused policy is kept")
        }
    }

    @Test("Without the Public Suffix List only the host itself can be set, and the refusal says what is missing")
    func withoutTheSuffixList() throws {
        func settings(_ rpID: String) -> PasskeySettings {
            var settings = PasskeySettings()
            settings.rpID = rpID
            return settings
        }
        #expect(try settings("auth.example.com").validated(publicOrigin: "https://auth.example.com", suffixes: nil).rpID
                == "auth.example.com")
        #expect(throws: AdminError.invalidField("passkeys.rp_id", RelyingPartyIDScope.Refusal.noSuffixList(
            rpID: "example.com", host: "auth.example.com").message)) {
            try settings("example.com").validated(publicOrigin: "https://auth.example.com", suffixes: nil)
        }
        #expect(RelyingPartyIDScope.Refusal.noSuffixList(rpID: "example.com", host: "auth.example.com").message
                == "example.com cannot be checked: the Public Suffix List (/usr/share/publicsuffix/public_suffix_list.dat, the publicsuffix package) is not installed on the server, and without it only auth.example.com itself can be set")
        #expect(throws: AdminError.invalidField("passkeys.rp_id", RelyingPartyIDScope.Refusal.publicSuffix(
            rpID: "com", host: "auth.example.com").message), "a top-level domain is a public suffix by the list's own last rule") {
            try settings("com").validated(publicOrigin: "https://auth.example.com", suffixes: nil)
        }
        #expect(PublicSuffixList(contentsOfFile: "/nonexistent/public_suffix_list.dat") == nil)
    }

    @Test("The list's algorithm: the longest rule wins, a wildcard covers one label, an exception gives one back, no rule means the last label",
          arguments: [
            ("auth.example.com", "com"),
            ("auth.example.co.uk", "co.uk"),
            ("a.b.kawasaki.jp", "b.kawasaki.jp"),
            ("www.city.kawasaki.jp", "kawasaki.jp"),
            ("login.bank.xn--55qx5d.cn", "xn--55qx5d.cn"),
            ("auth.example.internal", "internal"),
            ("localhost", "localhost"),
          ])
    func publicSuffix(domain: String, suffix: String) {
        let list = PublicSuffixList(rules: """
            // A comment, then rules as the list writes them.
            com
            uk
            co.uk
            jp
            *.kawasaki.jp
            !city.kawasaki.jp
            公司.cn   the first word of a line is the rule
            """)
        #expect(list.publicSuffix(of: domain) == suffix)
    }

    @Test("A parent below a wildcard suffix is refused as browsers refuse it")
    func parentAtAWildcardSuffix() {
        let list = PublicSuffixList(rules: "jp\n*.kawasaki.jp\n!city.kawasaki.jp")
        #expect(throws: RelyingPartyIDScope.Refusal.publicSuffix(rpID: "kawasaki.jp", host: "auth.b.kawasaki.jp")) {
            try RelyingPartyIDScope.check("kawasaki.jp", host: "auth.b.kawasaki.jp", suffixes: list)
        }
        #expect(throws: Never.self) { try RelyingPartyIDScope.check("city.kawasaki.jp", host: "auth.city.kawasaki.jp", suffixes: list) }
    }
}
