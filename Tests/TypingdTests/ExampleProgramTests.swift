import Foundation
import Testing

/// Runs the examples meant for real use, as a user would: the shell + jq live
/// session. (The Python and Node.js clients' own test suites run in
/// .ci/check-clients, outside `swift test`.)
@Suite("Example programs")
struct ExampleProgramTests {
    /// Runs `executable` with `arguments` in the package root; stdout, stderr, status.
    static func run(
        _ executable: String, _ arguments: [String], input: Data? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (String, String, Int32) {
        let run = try TestProcess.run(
            URL(fileURLWithPath: executable), arguments,
            environment: ["TYPINGD_BINARY": Daemon.binary.path], directory: DocumentExample.root,
            stdin: input.map { .bytes(Array($0)) } ?? .null, sourceLocation: sourceLocation)
        return (run.output, run.errors, run.status)
    }

    @Test("the live session script shows what Cleo sees, as it happens")
    func liveSession() throws {
        _ = try Tools.require("jq", for: "the live session script")
        let (stdout, stderr, status) = try Self.run("/bin/sh", ["examples/live_session.sh", Daemon.binary.path])
        #expect(status == 0, "\(stderr)")
        let seen = stdout.split(separator: "\n").map { $0.split(separator: "\t").last.map(String.init) ?? "" }
        #expect(
            seen == [
                "cleo sees: Ana is typing...",
                "cleo sees: Ana and Ben are typing...",
                "cleo sees: Ben is typing...",
                "cleo sees: (nobody is typing)",
                "cleo sees: Ana is typing...",
                "cleo sees: (nobody is typing)"
            ])
    }
}
