// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "typingd",
    products: [
        .executable(name: "typingd", targets: ["typingd"]),
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
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "TypingCoreTests", dependencies: ["TypingCore"]),
        .testTarget(name: "TypingProtocolTests", dependencies: ["TypingProtocol"]),
        .testTarget(
            name: "TranscriptTests",
            dependencies: ["typingd"],
            path: "Tests/TranscriptTests"
        ),
    ]
)
