import Foundation
import Testing
import TypingTestSupport

/// The external tools some tests need (python3, jq, mandoc, …), and what a test does
/// when one is missing: it is skipped, saying why, on a developer's machine, and it
/// fails under `CI=true`, where `.ci/run` installs every one of them, so a CI run
/// never passes by skipping (TypingTestSupport's `Requirement`).
enum Tools {
    /// The path of `tool`; when it is missing, skips the test (``Test/cancel(_:)``)
    /// saying `what`, or, under CI, records a failure and stops the test.
    static func require(_ tool: String, for what: String, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> String
    {
        try requireTool(tool, for: what, sourceLocation: sourceLocation)
    }

    /// Skips the test (or fails it under CI) because of `reason`.
    static func missing(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Never {
        try Requirement.missing(reason, sourceLocation: sourceLocation)
    }
}
