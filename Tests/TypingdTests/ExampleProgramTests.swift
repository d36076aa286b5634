import Foundation
import Testing

/// Runs the examples meant for real use, as a user would: the Python and Node.js
/// wrappers' own tests and the shell + jq live session.
@Suite("Example programs")
struct ExampleProgramTests {
    /// The full path of `tool` on PATH, if any.
    static func which(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(tool)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `executable` with `arguments` in the package root; stdout, stderr, status.
    static func run(_ executable: String, _ arguments: [String]) throws -> (String, String, Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = DocumentExample.root
        var environment = ProcessInfo.processInfo.environment
        environment["TYPINGD_BINARY"] = Daemon.binary.path
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let errors = ErrorCollector(err.fileHandleForReading)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: stdout, as: UTF8.self), String(decoding: errors.finish(), as: UTF8.self),
                process.terminationStatus)
    }

    @Test("the Python wrapper's tests pass against the built binary",
          .enabled(if: which("python3") != nil, "python3 is not installed"))
    func pythonWrapper() throws {
        let (_, stderr, status) = try Self.run(Self.which("python3") ?? "python3",
                                              ["-m", "unittest", "discover", "-s", "examples/python", "-v"])
        #expect(status == 0, "\(stderr)")
        #expect(stderr.contains("Ran 12 tests"))
    }

    @Test("the Node.js wrapper's tests pass against the built binary",
          .enabled(if: which("node") != nil, "node is not installed"))
    func nodeWrapper() throws {
        let (stdout, stderr, status) = try Self.run(Self.which("node") ?? "node", ["--test", "examples/node/"])
        #expect(status == 0, "\(stdout)\n\(stderr)")
        #expect(stdout.contains("# pass 10") && stdout.contains("# fail 0"), "\(stdout)")
    }

    @Test("the live session script shows what Cleo sees, as it happens",
          .enabled(if: which("jq") != nil, "jq is not installed"))
    func liveSession() throws {
        let (stdout, stderr, status) = try Self.run("/bin/sh", ["examples/live_session.sh", Daemon.binary.path])
        #expect(status == 0, "\(stderr)")
        let seen = stdout.split(separator: "\n").map { $0.split(separator: "\t").last.map(String.init) ?? "" }
        #expect(seen == [
            "cleo sees: Ana is typing...",
            "cleo sees: Ana and Ben are typing...",
            "cleo sees: Ben is typing...",
            "cleo sees: (nobody is typing)",
            "cleo sees: Ana is typing...",
            "cleo sees: (nobody is typing)",
        ])
    }
}
