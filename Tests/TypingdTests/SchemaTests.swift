import Foundation
import Testing

/// The JSON Schemas in `schema/` agree with typingd on every golden transcript:
/// every event valid, every command typingd accepted valid, every line it refused
/// as malformed invalid (schema/validate.py, with a real 2020-12 validator).
@Suite("JSON Schema")
struct SchemaTests {
    /// python3 with jsonschema (`.ci/run` installs it); skips (fails under CI) without.
    static func validator() throws -> String {
        let python = try Tools.require("python3", for: "the schema check")
        let (_, _, status) = try ExampleProgramTests.run(python, ["-c", "import jsonschema"])
        if status != 0 { try Tools.missing("python3 cannot import jsonschema: the schema check cannot run") }
        return python
    }

    @Test("every golden line agrees with the schemas")
    func goldens() throws {
        let (stdout, stderr, status) = try ExampleProgramTests.run(try Self.validator(),
                                                                   ["schema/validate.py", "examples/transcripts"])
        #expect(status == 0, "\(stderr)")
        #expect(stdout.hasSuffix(" 0 disagreements\n"), "\(stdout)")
        // Every transcript was read: more lines than the inputs alone hold.
        let checked = Int(stdout.split(separator: " ").first ?? "") ?? 0
        #expect(checked > 1500, "\(stdout)")
    }

    @Test("a schema that disagrees with typingd is caught")
    func disagreement() throws {
        let python = try Self.validator()
        // A transcript whose expected output claims typingd refused a valid command.
        let folder = try Daemon.temporaryFolder("schema")
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"{"cmd":"stats","id":1}"#.utf8 + [0x0A]).write(to: folder.appendingPathComponent("x.in.jsonl"))
        try Data(#"{"event":"error","line":1,"id":1,"code":"bad_field","message":"m","field":"id","extra":1}"#.utf8 + [0x0A])
            .write(to: folder.appendingPathComponent("x.out.jsonl"))
        let (stdout, stderr, status) = try ExampleProgramTests.run(python, ["schema/validate.py", folder.path])
        #expect(status == 1)
        #expect(stdout == "2 lines checked, 2 disagreements\n", "\(stdout)")
        #expect(stderr.contains("x.out.jsonl:1: event invalid") && stderr.contains("x.in.jsonl:1: typingd refused it"), "\(stderr)")
    }
}
