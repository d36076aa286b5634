// swift-tools-version:6.0
// The libFuzzer target for typingd's line handler. Built by fuzz/run.sh with
// `-sanitize=fuzzer,address`; not part of the main package's build.
import PackageDescription

let package = Package(
    name: "typingd-fuzz",
    dependencies: [.package(name: "typingd", path: "..")],
    targets: [
        .executableTarget(
            name: "FuzzLineHandler",
            dependencies: [.product(name: "TypingFuzzSupport", package: "typingd")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    ]
)
