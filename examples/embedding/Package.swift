// swift-tools-version:6.0
import Foundation
import PackageDescription

// A package of yours that runs typingd's engine in-process, depending on typingd by
// version, as any Swift package does. Where typingd is hosted is your choice; the
// repository's .ci/run points TYPINGD_PACKAGE_URL at a tagged clone of this checkout
// (file://…), so that CI builds exactly what a dependent would.
let url = ProcessInfo.processInfo.environment["TYPINGD_PACKAGE_URL"] ?? "https://github.com/typingd/typingd.git"
let version = Version(stringLiteral: ProcessInfo.processInfo.environment["TYPINGD_PACKAGE_VERSION"] ?? "4.0.0")

let package = Package(
    name: "embedding",
    dependencies: [
        .package(url: url, exact: version)
    ],
    targets: [
        .executableTarget(
            name: "Embedding",
            dependencies: [
                .product(name: "TypingCore", package: "typingd"),
                .product(name: "TypingProtocol", package: "typingd")
            ]
        )
    ]
)
