import Foundation
import Testing
@testable import CountersignServer

/// The discovery document as an independent OpenID Connect library reads it: Authlib's
/// `OpenIDProviderMetadata.validate()`, which checks every member OpenID Connect Discovery 1.0
/// §3 requires or defines (https issuer, the authorization endpoint, `response_types_supported`
/// with `code`, subject types, RS256 among the ID token algorithms, …) and RFC 8414's.
@Suite("Discovery against Authlib's validator")
struct DiscoveryValidatorTests {
    /// The first python3 on PATH, if it has Authlib.
    static let python: URL? = {
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        guard let path = searchPath.split(separator: ":").map({ "\($0)/python3" })
                .first(where: FileManager.default.isExecutableFile(atPath:)),
              (try? ChildProcess.runBlocking(URL(fileURLWithPath: path), ["-c", "import authlib.oidc.discovery"])) != nil else {
            FileHandle.standardError.write(Data("DiscoveryValidatorTests: SKIPPED: python3 with authlib is not available (pip install authlib)\n".utf8))
            return nil
        }
        return URL(fileURLWithPath: path)
    }()

    @Test("Authlib accepts the document of the default tenant and of another tenant, without special cases",
          .enabled(if: python != nil, "python3 with authlib is not available (pip install authlib)"))
    func authlibAcceptsTheDocument() async throws {
        try await TestServer.routed { server in
            _ = try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"])
            for path in ["/.well-known/openid-configuration", "/t/acme/.well-known/openid-configuration"] {
                let answer = try await server.call("GET", path)
                #expect(answer.status == 200)
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("discovery-\(UUID().uuidString).json")
                try answer.data.write(to: file)
                defer { try? FileManager.default.removeItem(at: file) }
                let output = try await ChildProcess.run(try #require(Self.python), ["-c", """
                    import json, sys
                    from authlib.oidc.discovery import OpenIDProviderMetadata
                    metadata = OpenIDProviderMetadata(json.load(open(sys.argv[1])))
                    metadata.validate()
                    print("valid", metadata["issuer"])
                    """, file.path])
                #expect(output.hasPrefix("valid https://countersign.test"), "\(path): \(output)")
            }
        }
    }
}
