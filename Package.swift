// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Countersign",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "CountersignCore", targets: ["CountersignCore"]),
        .library(name: "CountersignKit", targets: ["CountersignKit"]),
        .library(name: "CountersignServer", targets: ["CountersignServer"]),
        .executable(name: "countersign", targets: ["countersign"]),
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
    ],
    targets: [
        .target(
            name: "CountersignCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "CountersignKit",
            dependencies: [
                "CountersignCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "CountersignServer",
            dependencies: [
                "CountersignCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .executableTarget(
            name: "countersign",
            dependencies: [
                "CountersignCore",
                "CountersignKit",
                "CountersignServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .testTarget(
            name: "CountersignCoreTests",
            dependencies: ["CountersignCore", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "CountersignKitTests",
            dependencies: ["CountersignKit", "CountersignCore", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "CountersignServerTests",
            dependencies: [
                "CountersignServer", "CountersignKit", "CountersignCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ]
)
