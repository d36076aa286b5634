// swift-tools-version:6.0
import PackageDescription

/// typingd on a NATS JetStream cluster: one executable, `typingd-cluster`, whose
/// subcommands are the roles (route, shard, gateway, ctl, partition), over NATS's
/// official C client (Debian's libnats-dev) and typingd's engine in-process.
///
/// A package of its own, so that the root package needs only jansson: it depends
/// on the root by path.
let package = Package(
    name: "typingd-cluster",
    products: [
        .executable(name: "typingd-cluster", targets: ["typingd-cluster"]),
        /// The roles as types (Router, Shard, Gateway), for a chat server that embeds
        /// a gateway, and for tests.
        .library(name: "TypingCluster", targets: ["TypingCluster"])
    ],
    dependencies: [
        .package(name: "typingd", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0")
    ],
    targets: [
        /// nats.c, the official NATS client for C, found through pkg-config.
        .systemLibrary(
            name: "CNats",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]
        ),
        /// zlib, for the router's deflated batches.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        /// A small Swift face of nats.c: connections, JetStream, key-value buckets.
        /// It owns every C object it makes and copies messages out, so nothing of C
        /// escapes it.
        .target(name: "NatsClient", dependencies: ["CNats"]),
        /// The roles: routing, shards with the engine in-process, gateways.
        .target(
            name: "TypingCluster",
            dependencies: [
                "NatsClient", "CZlib",
                .product(name: "TypingProtocol", package: "typingd"),
                .product(name: "TypingPartitioning", package: "typingd"),
                .product(name: "TypingCore", package: "typingd"),
                .product(name: "TypingdOptions", package: "typingd"),
                // To read TYPINGD_OPTIONS with typingd's own option parser.
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]
        ),
        .executableTarget(
            name: "typingd-cluster",
            dependencies: [
                "TypingCluster", "NatsClient",
                .product(name: "TypingProtocol", package: "typingd"),
                .product(name: "TypingPartitioning", package: "typingd"),
                .product(name: "TypingdOptions", package: "typingd"),
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]
        ),
        .testTarget(
            name: "TypingClusterTests",
            dependencies: [
                "TypingCluster", "NatsClient", "CNats",
                .product(name: "TypingProtocol", package: "typingd"),
                .product(name: "TypingPartitioning", package: "typingd"),
                .product(name: "TypingCore", package: "typingd"),
                .product(name: "TypingTestSupport", package: "typingd")
            ])
    ]
)
