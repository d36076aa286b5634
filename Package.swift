// swift-tools-version:6.0
import PackageDescription

/// Release builds specialize generics across the package's modules: the daemon
/// instantiates `Session<JSONFormat, StandardOutput>`, whose hot path (framing,
/// decoding, the engine, encoding) lives in the library modules; without this it
/// would run unspecialized, looking up generic metadata on every line.
let crossModule: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]

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
            dependencies: [.product(name: "HeapModule", package: "swift-collections")],
            swiftSettings: crossModule
        ),
        /// Framing, jansson decoding of commands, byte encoding of events.
        .target(
            name: "TypingProtocol",
            dependencies: ["TypingCore", "CJansson"],
            swiftSettings: crossModule
        ),
        /// The executable: options, raw stdin/stdout, the event loop.
        .executableTarget(
            name: "typingd",
            dependencies: [
                "TypingProtocol",
                "CLinux",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: crossModule
        ),
        .testTarget(name: "TypingCoreTests", dependencies: ["TypingCore"]),
        .testTarget(name: "TypingProtocolTests", dependencies: ["TypingProtocol"]),
        /// The executable as users run it: golden transcripts, documented
        /// examples, the live process through pipes.
        .testTarget(name: "TypingdTests", dependencies: ["typingd"]),
    ]
)
