import Foundation
import Testing

/// Runs the examples meant for real use, as a user would: the Python and Node.js
/// wrappers' own tests and the shell + jq live session.
@Suite("Example programs")
struct ExampleProgramTests {
    /// Runs `executable` with `arguments` in the package root; stdout, stderr, status.
    static func run(_ executable: String, _ arguments: [String], input: Data? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> (String, String, Int32) {
        let run = try TestProcess.run(URL(fileURLWithPath: executable), arguments,
                                      environment: ["TYPINGD_BINARY": Daemon.binary.path], directory: DocumentExample.root,
                                      stdin: input.map { .bytes(Array($0)) } ?? .null, sourceLocation: sourceLocation)
        return (run.output, run.errors, run.status)
    }

    @Test("the Python client's tests all run and pass against the built binary, both clients")
    func pythonWrapper() throws {
        let python = try Tools.require("python3", for: "the Python client's tests")
        // test_contract.py's scenarios run once per client (threaded, asyncio): at least
        // one test per declared test function, none skipped.
        let declared = try Tools.count(#"^\s*def test_"#, in: "clients/python/tests/test_threaded.py")
            + Tools.count(#"^\s*def test_"#, in: "clients/python/tests/test_contract.py")
        let (_, stderr, status) = try Self.run(python, ["-m", "unittest", "discover", "-s", "clients/python/tests",
                                                        "-t", "clients/python", "-v"])
        #expect(status == 0, "\(stderr)")
        let ran = stderr.firstMatch(of: #/Ran (\d+) tests/#).flatMap { Int($0.1) } ?? 0
        #expect(declared > 0 && ran >= declared && stderr.contains("\nOK\n") && !stderr.contains("skipped"),
                "\(declared) tests declared, \(ran) ran:\n\(stderr)")
    }

    @Test("the Node.js client's tests all run and pass against the built binary")
    func nodeWrapper() throws {
        let node = try Tools.require("node", for: "the Node.js client's tests")
        // What `npm test` (`node --test`) runs in clients/node: every .js file under test/,
        // named here so that any Node version runs the same set.
        let folder = DocumentExample.root.appendingPathComponent("clients/node/test").path
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder)
            .filter { $0.hasSuffix(".js") }.sorted().map { "clients/node/test/\($0)" }
        let declared = try files.reduce(0) { $0 + (try Tools.count(#"^test\("#, in: $1)) }
        // The type check of index.d.ts is skipped where tsc is not installed (the package
        // does not require it); every other test passes.
        let skipped = Tools.which("tsc") == nil ? 1 : 0
        let (stdout, stderr, status) = try Self.run(node, ["--test"] + files)
        #expect(status == 0, "\(stdout)\n\(stderr)")
        #expect(files.count >= 3 && declared > 0 && stdout.contains("# pass \(declared - skipped)\n")
                && stdout.contains("# skipped \(skipped)\n") && stdout.contains("# fail 0"),
                "\(declared) tests declared in \(files), \(skipped) skipped:\n\(stdout)")
    }

    @Test("the live session script shows what Cleo sees, as it happens")
    func liveSession() throws {
        _ = try Tools.require("jq", for: "the live session script")
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
