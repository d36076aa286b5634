// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "typingd",
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        /// The pure engine: membership, streaks, timers, names, phrases. No I/O, no clock.
        .target(
            name: "TypingCore",
            dependencies: [.product(name: "HeapModule", package: "swift-collections")]
        ),
        .testTarget(name: "TypingCoreTests", dependencies: ["TypingCore"]),
    ]
)
