import Foundation
import Testing
import TypingTestSupport

/// The external tools some tests need (python3, node, jq, …), and what a test does
/// when one is missing: it is skipped, saying why, on a developer's machine, and it
/// fails under `CI=true`, where `.ci/run` installs every one of them, so a CI run
/// never passes by skipping.
enum Tools {
    /// True under CI (`CI=true`, as CI systems set it).
    static var inCI: Bool { Requirement.inCI }

    /// The full path of `tool` on PATH, if any.
    static func which(_ tool: String) -> String? { Requirement.which(tool) }

    /// The path of `tool`; when it is missing, skips the test (``Test/cancel(_:)``)
    /// saying `what`, or, under CI, records a failure and stops the test.
    static func require(_ tool: String, for what: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try requireTool(tool, for: what, sourceLocation: sourceLocation)
    }

    /// Skips the test (or fails it under CI) because of `reason`.
    static func missing(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Never {
        try Requirement.missing(reason, sourceLocation: sourceLocation)
    }

    /// The number of lines of the file at `path` (relative to the package root) that
    /// match `pattern`: how many tests a test file declares, so that a runner's
    /// count is checked against the file, not against a number written here.
    static func count(_ pattern: String, in path: String) throws -> Int {
        let text = try String(contentsOf: DocumentExample.root.appendingPathComponent(path), encoding: .utf8)
        let regex = try Regex(pattern).anchorsMatchLineEndings()
        return text.matches(of: regex).count
    }
}
