import Foundation
import Glibc

/// The built `typingd` binary and the scratch files and folders of the tests that
/// run it (through ``TestProcess``).
enum Daemon {
    /// The binary: `$TYPINGD_BINARY`, else `typingd` next to the test bundle.
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["TYPINGD_BINARY"] {
            return URL(fileURLWithPath: path)
        }
        let tests = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return tests.deletingLastPathComponent().appendingPathComponent("typingd")
    }

    /// A path in the temporary folder no other test, test case or test run uses:
    /// parameterized cases run at once in one process, so a name made of the pid
    /// and the arguments is shared, and one case's clean-up removes another's input
    /// before it is opened (CI saw it: one issue, no hang).
    static func temporaryFile(_ prefix: String, suffix: String = "") -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("typingd-\(prefix)-\(getpid())-\(UUID().uuidString)\(suffix)")
    }

    /// A new, empty folder at a ``temporaryFile(_:suffix:)`` path (the caller removes it).
    static func temporaryFolder(_ prefix: String) throws -> URL {
        let url = temporaryFile(prefix)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
