// swift-tools-version:6.0
import PackageDescription

/// The engine's invariant checker (`Engine.checkInvariants()` and the storage types'
/// own checks) does its work only where it is used: in debug builds, which is what
/// `swift test` runs, and in the fuzzer, whose build (fuzz/run.sh) passes
/// `-Xswiftc -DTYPINGD_INTERNAL_CHECKS`. Elsewhere it exists with empty bodies, so
/// that release test builds compile, and the daemon that ships checks nothing.
/// (swift-collections does the same with COLLECTIONS_INTERNAL_CHECKS.)
let internalChecks: [SwiftSetting] = [.define("TYPINGD_INTERNAL_CHECKS", .when(configuration: .debug))]

let package = Package(
    name: "typingd",
    products: [
        .executable(name: "typingd", targets: ["typingd"]),
        /// The engine alone: conversations, members, typing, timeouts, phrases, as
        /// values in and out. Pure Swift, no C library.
        .library(name: "TypingCore", targets: ["TypingCore"]),
        /// The protocol around it: framing, JSON commands parsed with jansson, events
        /// encoded as the protocol's JSON (or text), a session from bytes to bytes.
        .library(name: "TypingProtocol", targets: ["TypingProtocol"]),
        /// typingd's session options (ArgumentParser) and the files they name
        /// (phrase tables): one source of truth for typingd and for what embeds its
        /// engine with typingd's options (the cluster's shard).
        .library(name: "TypingdOptions", targets: ["TypingdOptions"]),
        /// Running several typingd processes, one per partition of the conversations:
        /// the routing rule (`Partition`, with the quick reading of a raw line), and
        /// the commands that rebuild a partition's session from a snapshot
        /// (`SnapshotRebuild`). A product of its own, as swift-nio ships NIOHTTP1
        /// beside NIOCore: what one typingd needs does not carry it.
        .library(name: "TypingPartitioning", targets: ["TypingPartitioning"]),
        /// The fuzzer's properties (`LineHandlerFuzz`), for typingd's own fuzzer
        /// (fuzz/, a package of its own, which can only link a product) and tests:
        /// kept out of the libraries, as NIOTestUtils is out of NIO. Not API.
        .library(name: "TypingFuzzSupport", targets: ["TypingFuzzSupport"]),
        /// What the tests of this package and of cluster/ share (as NIOTestUtils
        /// serves swift-nio's): the one seeded generator (`SplitMix64`, replayable
        /// with `TYPINGD_TEST_SEED`), `require` (skip locally, fail under CI=true)
        /// and a deadline-based `eventually`. Not API.
        .library(name: "TypingTestSupport", targets: ["TypingTestSupport"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0")
    ],
    targets: [
        /// jansson, the C JSON parser, found through pkg-config.
        .systemLibrary(
            name: "CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"])]
        ),
        /// A per-thread bump allocator for jansson while one line is decoded: malloc
        /// and free of every key and value were an eighth of typingd's instructions.
        .target(name: "CJanssonArena", dependencies: ["CJansson"]),
        /// Linux interfaces the Glibc module lacks (eventfd, malloc_trim, SIGRTMIN/SIGRTMAX).
        .systemLibrary(name: "CLinux"),
        /// The pure engine: membership, streaks, timers, names, phrases. No I/O, no clock.
        .target(
            name: "TypingCore",
            dependencies: [.product(name: "HeapModule", package: "swift-collections")],
            swiftSettings: internalChecks
        ),
        /// Framing, jansson decoding of commands, byte encoding of events.
        .target(
            name: "TypingProtocol",
            dependencies: ["TypingCore", "CJansson", "CJanssonArena"],
            swiftSettings: internalChecks
        ),
        /// The partitioning rule and the snapshot rebuild, over the protocol.
        .target(
            name: "TypingPartitioning",
            dependencies: ["TypingProtocol", "TypingCore", "CJansson", "CJanssonArena"],
            swiftSettings: internalChecks
        ),
        /// The tests' shared support: Foundation and Swift Testing only.
        .target(name: "TypingTestSupport"),
        /// The properties the fuzzer checks on arbitrary bytes, and `swift test` on
        /// the fuzzer's named regressions (fuzz/regressions/).
        .target(
            name: "TypingFuzzSupport",
            dependencies: ["TypingProtocol", "TypingCore", "CJansson"],
            swiftSettings: internalChecks
        ),
        /// typingd's session options and the user files they name.
        .target(
            name: "TypingdOptions",
            dependencies: [
                "TypingProtocol", "TypingCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ],
            swiftSettings: internalChecks
        ),
        /// The executable: options, raw stdin/stdout, the event loop.
        .executableTarget(
            name: "typingd",
            dependencies: [
                "TypingProtocol", "TypingdOptions", "TypingCore",
                "CJansson", "CLinux",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ],
            swiftSettings: internalChecks
        ),
        .testTarget(
            name: "TypingCoreTests", dependencies: ["TypingCore", "TypingTestSupport"], swiftSettings: internalChecks),
        .testTarget(
            name: "TypingProtocolTests",
            dependencies: [
                "TypingProtocol", "TypingCore", "TypingFuzzSupport", "TypingTestSupport", "CJansson", "CJanssonArena"
            ],
            swiftSettings: internalChecks),
        .testTarget(
            name: "TypingPartitioningTests",
            dependencies: [
                "TypingPartitioning", "TypingProtocol", "TypingCore", "TypingTestSupport", "CJansson", "CJanssonArena"
            ],
            swiftSettings: internalChecks),
        /// The executable as users run it: golden transcripts, documented
        /// examples, the live process through pipes.
        .testTarget(
            name: "TypingdTests",
            dependencies: [
                "typingd", "TypingdOptions", "TypingProtocol", "TypingCore", "TypingTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ],
            swiftSettings: internalChecks)
    ]
)
