// swift-tools-version:6.2
import PackageDescription

// The CBOR decoder, the RADIUS packet reader, the PAM module's line parser, the readers of what
// directories send (DNs, object ids, filter values), SCIM's filter and PATCH readers, and mail's
// address reader and message writer under
// libFuzzer, as a package of their own so
// that fuzzing flags (-sanitize=fuzzer,address) never reach the main package's build. Run with
// ./run.sh.
let package = Package(
    name: "CountersignFuzz",
    dependencies: [.package(name: "Countersign", path: "..")],
    targets: [
        .executableTarget(
            name: "FuzzCBOR",
            dependencies: ["LibFuzzerDriver", .product(name: "CountersignCBOR", package: "Countersign")]
        ),
        .executableTarget(
            name: "FuzzRADIUS",
            dependencies: ["LibFuzzerDriver", .product(name: "CountersignRADIUS", package: "Countersign")]
        ),
        .executableTarget(
            name: "FuzzSCIM",
            dependencies: ["LibFuzzerDriver", .product(name: "CountersignSCIM", package: "Countersign")]
        ),
        .executableTarget(
            name: "FuzzPAMLines",
            dependencies: ["LibFuzzerDriver", .product(name: "CountersignPAM", package: "Countersign")]
        ),
        .executableTarget(
            name: "FuzzLDAPNames",
            dependencies: ["LibFuzzerDriver", .product(name: "CountersignLDAPNames", package: "Countersign")]
        ),
        .executableTarget(
            name: "FuzzMail",
            dependencies: ["LibFuzzerDriver", .product(name: "CountersignMailFormat", package: "Countersign")]
        ),
        .target(name: "LibFuzzerDriver"),
    ]
)
