// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "typingd",
    products: [
        .executable(name: "typingd", targets: ["typingd"]),
        /// The engine and the codec, for embedding and for the fuzzer (fuzz/).
        .library(name: "TypingProtocol", targets: ["TypingProtocol", "TypingCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        /// jansson, the C JSON parser, found through pkg-config.
        .systemLibrary(
            name: "CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"])]
        ),
        /// Linux interfaces the Glibc module lacks (signalfd).
        .systemLibrary(name: "CLinux"),
        /// The pure engine: membership, streaks, timers, names, phrases. No I/O, no clock.
        .target(
            name: "TypingCore",
            dependencies: [.product(name: "HeapModule", package: "swift-collections")]
        ),
        /// Framing, jansson decoding of commands, byte encoding of events.
        .target(
            name: "TypingProtocol",
            dependencies: ["TypingCore", "CJansson"]
        ),
        /// The executable: options, raw stdin/stdout, the event loop.
        .executableTarget(
            name: "typingd",
            dependencies: [
                "TypingProtocol",
                "CLinux",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "TypingCoreTests", dependencies: ["TypingCore"]),
        .testTarget(name: "TypingProtocolTests", dependencies: ["TypingProtocol"]),
        /// The executable as users run it: golden transcripts, documented
        /// examples, the live process through pipes.
        .testTarget(name: "TypingdTests", dependencies: ["typingd"]),
    ]
)
