// swift-tools-version:6.2
import PackageDescription
#if os(Linux)
import Glibc
#endif

/// Whether this host's glibc reads packed relative relocations (DT_RELR, glibc 2.36 and later).
/// A binary linked with them needs that glibc where it runs; on an older one it would not start.
let glibcReadsPackedRelocations: Bool = {
    #if os(Linux)
    var version = [CChar](repeating: 0, count: 64)
    guard confstr(Int32(_CS_GNU_LIBC_VERSION), &version, version.count) > 0 else { return false }
    // "glibc 2.36"
    let release = String(cString: version).split(separator: " ").last ?? ""
    let numbers = release.split(separator: ".").compactMap { Int($0) }
    return numbers.count >= 2 && (numbers[0], numbers[1]) >= (2, 36)
    #else
    return false
    #endif
}()

/// The release link's inputs on Linux: the order of the code and where the unnamed helpers go.
let linkInputs = Context.packageDirectory + "/Sources/countersign/Link"

/// The test targets are compiled without optimisation even in a release build, which CI runs the
/// suite on (`swift test -c release -Xswiftc -enable-testing`): the code under test is optimised
/// as operators run it, while the 34,000 lines of tests, which optimisation only slows to build,
/// are compiled in batches on every core (batch mode needs `-num-threads 0`: the release
/// build's `-num-threads` would give each file a compiler of its own) instead of as one
/// optimised whole on one core. BENCHMARKS.md, "CI's build and suite", has the times.
let testSettings: [SwiftSetting] = [
    .unsafeFlags(["-Onone", "-no-whole-module-optimization", "-num-threads", "0", "-enable-batch-mode"], .when(configuration: .release)),
]

let package = Package(
    name: "Countersign",
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .library(name: "CountersignCore", targets: ["CountersignCore"]),
        .library(name: "CountersignKit", targets: ["CountersignKit"]),
        .library(name: "CountersignWebAuthn", targets: ["CountersignWebAuthn"]),
        .library(name: "CountersignServer", targets: ["CountersignServer"]),
        .library(name: "CountersignCBOR", targets: ["CountersignCBOR"]),
        // RADIUS packets read and written (for the server, and for its fuzz target in Fuzz/).
        .library(name: "CountersignRADIUS", targets: ["CountersignRADIUS"]),
        // SCIM 2.0's wire format and semantics (for the server, and for its fuzz target in Fuzz/).
        .library(name: "CountersignSCIM", targets: ["CountersignSCIM"]),
        // The PAM module's C code (for its fuzz target in Fuzz/; the module itself is built by
        // Scripts/build-pam).
        .library(name: "CountersignPAM", targets: ["CountersignPAM"]),
        // What directories send, read without libldap (for the LDAP client, and for its fuzz
        // target in Fuzz/): distinguished names, object ids, filter values.
        .library(name: "CountersignLDAPNames", targets: ["CountersignLDAPNames"]),
        // Mail's addresses and messages (for the SMTP client, and for its fuzz target in Fuzz/).
        .library(name: "CountersignMailFormat", targets: ["CountersignMailFormat"]),
        .executable(name: "countersign", targets: ["countersign"]),
        // The benchmarks (BENCHMARKS.md), apart from the binary operators run.
        .executable(name: "countersign-bench", targets: ["countersign-bench"]),
        // The reference authenticator app's logic, for its Xcode project (Examples/AuthenticatorApp).
        .library(name: "AuthenticatorAppModel", targets: ["AuthenticatorAppModel"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", exact: "1.13.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", exact: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", exact: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", exact: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", exact: "1.7.4"),
        .package(url: "https://github.com/vapor/jwt-kit.git", exact: "5.8.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", exact: "2.1.1"),
        .package(url: "https://github.com/vapor/multipart-kit.git", exact: "4.7.1"),
    ],
    targets: [
        // Strict CBOR (RFC 8949) for WebAuthn attestation objects and COSE keys.
        .target(name: "CountersignCBOR"),
        // RADIUS packets (RFC 2865 §3): framing and attribute lengths only, no dependency, so that
        // the fuzzer builds it alone; the authenticators and the shared secret are the server's.
        .target(name: "CountersignRADIUS"),
        // SCIM 2.0 (RFC 7643, RFC 7644) without storage: filters, PATCH, resources and the
        // discovery documents. Foundation only, so that the fuzzer builds it alone.
        .target(name: "CountersignSCIM"),
        // The PAM module's C code: the PAM ABI and the lines of the helper it runs. Scripts/build-pam
        // compiles pam_countersign.so from it with the C compiler alone, so that the module needs
        // no Swift runtime in sshd or sudo; this target is for its tests and fuzzing. Needs
        // Linux-PAM's headers and library (Debian's libpam0g-dev).
        .target(name: "CountersignPAM", linkerSettings: [.linkedLibrary("pam")]),
        // OpenLDAP's client library (Debian's libldap2-dev), for the directory user source.
        .systemLibrary(name: "CLDAP", providers: [.apt(["libldap2-dev"])]),
        // Distinguished names (RFC 4514), objectGUID and entryUUID as ids, filter values
        // (RFC 4515): pure Swift and no dependency, so that the fuzzer builds it without libldap.
        .target(name: "CountersignLDAPNames"),
        // An LDAP client for the directory user source (issue 40): libldap's blocking calls on
        // threads of their own, paged searches, service and user binds, failover between servers.
        .target(
            name: "CountersignLDAP",
            dependencies: [
                "CLDAP",
                "CountersignLDAPNames",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // libcurl (Debian's libcurl4-openssl-dev), whose SMTP client sends the mail outbox.
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // Mail's addresses and messages as RFC 5322 and MIME write them: Foundation only, so that
        // the fuzzer builds it without libcurl.
        .target(name: "CountersignMailFormat"),
        // SMTP over TLS or STARTTLS with libcurl's blocking sends on threads of their own.
        .target(
            name: "CountersignMail",
            dependencies: ["CCurl", "CountersignMailFormat", .product(name: "NIOPosix", package: "swift-nio")]
        ),
        .target(
            name: "CountersignCore",
            // CBOR for its UTF-8 check (`String(validUTF8:)`), which the JSON parser shares.
            dependencies: ["CountersignCBOR", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // WebAuthn's wire forms, shared by the relying party and the SDK's platform authenticator.
        .target(
            name: "CountersignWebAuthn",
            dependencies: [
                "CountersignCore",
                "CountersignCBOR",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "CountersignKit",
            dependencies: [
                "CountersignCore",
                "CountersignWebAuthn",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "CountersignServer",
            dependencies: [
                "CountersignCore",
                "CountersignCBOR",
                "CountersignRADIUS",
                "CountersignLDAP",
                "CountersignMail",
                "CountersignSCIM",
                "CountersignWebAuthn",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            // The OpenAPI document's pieces and the pages' templates, stylesheets and scripts
            // (Resources/) are built into the server as strings by the plugin below.
            exclude: ["OpenAPI/document.json", "OpenAPI/Features", "Resources"],
            plugins: ["EmbedFiles"]
        ),
        // Writes text files into a Swift source as string literals (for EmbedFiles).
        .executableTarget(name: "EmbedText"),
        .plugin(name: "EmbedFiles", capability: .buildTool(), dependencies: ["EmbedText"]),
        // Local HTTP/2 endpoints that speak the APNs provider API and FCM HTTP v1 (with its
        // OAuth token endpoint): the peers of the push tests and of `countersign-bench push`.
        .target(
            name: "CountersignPushEmulator",
            dependencies: [
                "CountersignCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // What `countersign` and `countersign-bench` both use: the administration API's and the
        // relying party's clients, the SwiftNIO transport, and how a failure to reach a server reads.
        .target(
            name: "CountersignCommandLine",
            dependencies: [
                "CountersignKit",
                "CountersignCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "countersign",
            dependencies: [
                "CountersignCore",
                "CountersignWebAuthn",
                "CountersignKit",
                "CountersignServer",
                "CountersignCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // The loopback listener of `device enroll --sign-in`.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            // Inputs of the release link below, not sources.
            exclude: ["Link"],
            linkerSettings: [
                // Fewer pages resident in a running server (BENCHMARKS.md, "Memory: the
                // binary's link" and "Memory: code in the order it runs"):
                // - the executable's own symbols are not exported (the static Swift runtime's
                //   link would export them all: 5 MB of symbol tables, 2–3.5 MiB of them resident);
                // - where glibc reads them, lld packs the relative relocations the loader applies
                //   at start (DT_RELR) instead of reading 2–4 MB;
                // - the functions a server runs come first, in one stretch of the text
                //   (Link/code-order.txt, written by Benchmarks/code-order.py), and the compiler's
                //   unnamed helpers beside them (Link/private-text.ld). Functions the file names
                //   that a build lacks are passed over.
                .unsafeFlags(
                    ["-use-ld=lld", "-Xlinker", "--no-export-dynamic"]
                        + (glibcReadsPackedRelocations ? ["-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"] : [])
                        + [
                            "-Xlinker", "--symbol-ordering-file=\(linkInputs)/code-order.txt",
                            "-Xlinker", "--no-warn-symbol-ordering",
                            "-Xlinker", "--script=\(linkInputs)/private-text.ld",
                        ],
                    .when(platforms: [.linux], configuration: .release)
                ),
            ]
        ),
        // The benchmarks, with a server of their own in process or against one running. Linked
        // without `countersign`'s settings above: they keep a server's pages out of memory, and
        // loops per second do not move with them (BENCHMARKS.md, "Memory: code in the order it runs").
        .executableTarget(
            name: "countersign-bench",
            dependencies: [
                "CountersignCore",
                "CountersignWebAuthn",
                "CountersignKit",
                "CountersignServer",
                "CountersignPushEmulator",
                "CountersignCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The reference authenticator app's logic (view models, messages, state machines),
        // without UIKit: tested here on Linux against a real server, compiled for iOS with the
        // app's screens by Scripts/build-ios. The app itself is Examples/AuthenticatorApp.
        .target(
            name: "AuthenticatorAppModel",
            dependencies: ["CountersignKit", "CountersignCore"],
            path: "Examples/AuthenticatorApp/Model"
        ),
        .testTarget(name: "CountersignCBORTests", dependencies: ["CountersignCBOR"], swiftSettings: testSettings),
        .testTarget(
            name: "CountersignCoreTests",
            dependencies: ["CountersignCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "CountersignKitTests",
            dependencies: [
                "CountersignKit", "CountersignCore", "CountersignWebAuthn", "CountersignCBOR",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "CountersignServerTests",
            dependencies: [
                "CountersignServer", "CountersignKit", "CountersignCore", "CountersignPushEmulator", "CountersignWebAuthn",
                "CountersignCBOR", "CountersignRADIUS", "CountersignSCIM", "CountersignPAM", "AuthenticatorAppModel",
                "CountersignLDAP", "CountersignMail",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                // The tests' webhook receiver is a small Hummingbird server; feature tests drive
                // the server's router in memory with HummingbirdTesting.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The schema snapshots the migration tests compare against, read by path.
            exclude: ["Fixtures"],
            swiftSettings: testSettings
        ),
    ]
)
