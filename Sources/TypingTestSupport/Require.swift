import Foundation
import Testing

/// What a test does when something it needs is missing (a tool, a server, a
/// file): on a developer's machine it is skipped, saying why (`Test.cancel`); under
/// `CI=true`, where `.ci/run` installs everything, it fails, so that a CI run never
/// passes by skipping.
public enum Requirement {
    /// True under CI (`CI=true`, as CI systems set it).
    public static var inCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// Skips the test saying `reason`, or, under CI, records a failure and stops it.
    public static func missing(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Never {
        if inCI {
            Issue.record(
                "\(reason) (CI=true: a missing requirement is a failure, not a skip)", sourceLocation: sourceLocation)
            throw Missing(reason: reason)
        }
        try Test.cancel("skipped: \(reason)", sourceLocation: sourceLocation)
    }

    /// The error that stops a test whose requirement is missing under CI.
    public struct Missing: Error, CustomStringConvertible {
        /// What was missing.
        public let reason: String
        /// The reason.
        public var description: String { reason }
    }

    /// The full path of `tool` on PATH, if any.
    public static func which(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(tool)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// `value`, or, when it is nil, the test is skipped saying `reason` (it fails under
/// `CI=true`): see ``Requirement``.
public func require<Value>(
    _ value: Value?, _ reason: @autoclosure () -> String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> Value {
    if let value { return value }
    try Requirement.missing(reason(), sourceLocation: sourceLocation)
}

/// Goes on when `condition` holds; otherwise the test is skipped saying `reason`
/// (it fails under `CI=true`): see ``Requirement``.
public func require(
    _ condition: Bool, _ reason: @autoclosure () -> String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    if !condition { try Requirement.missing(reason(), sourceLocation: sourceLocation) }
}

/// The full path of `tool` on PATH; when it is missing, the test is skipped saying
/// what cannot run without it (it fails under `CI=true`).
public func requireTool(_ tool: String, for what: String, sourceLocation: SourceLocation = #_sourceLocation) throws
    -> String
{
    try require(Requirement.which(tool), "\(tool) is not installed: \(what) cannot run", sourceLocation: sourceLocation)
}
