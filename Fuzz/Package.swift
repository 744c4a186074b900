// swift-tools-version:6.2
import PackageDescription

// The CBOR decoder under libFuzzer, as its own package so that fuzzing flags
// (-sanitize=fuzzer,address) never reach the main package's build. Run with ./run.sh.
let package = Package(
    name: "CountersignFuzz",
    dependencies: [.package(name: "Countersign", path: "..")],
    targets: [
        .executableTarget(
            name: "FuzzCBOR",
            dependencies: ["LibFuzzerDriver", .product(name: "CountersignCBOR", package: "Countersign")]
        ),
        .target(name: "LibFuzzerDriver"),
    ]
)
