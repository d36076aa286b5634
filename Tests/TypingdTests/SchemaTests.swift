import Foundation
import Testing

/// The JSON Schemas in `schema/` agree with typingd on every golden transcript:
/// every event valid, every command typingd accepted valid, every line it refused
/// as malformed invalid (schema/validate.py, with a real 2020-12 validator).
@Suite("JSON Schema")
struct SchemaTests {
    /// Whether python3 can import jsonschema (`.ci/run` installs it).
    static let validatorAvailable: Bool = {
        guard let python = ExampleProgramTests.which("python3"),
              let (_, _, status) = try? ExampleProgramTests.run(python, ["-c", "import jsonschema"]) else { return false }
        return status == 0
    }()

    @Test("every golden line agrees with the schemas", .enabled(if: validatorAvailable, "python3 -m jsonschema is not installed"))
    func goldens() throws {
        let (stdout, stderr, status) = try ExampleProgramTests.run(ExampleProgramTests.which("python3") ?? "python3",
                                                                   ["schema/validate.py", "examples/transcripts"])
        #expect(status == 0, "\(stderr)")
        #expect(stdout.hasSuffix(" 0 disagreements\n"), "\(stdout)")
        // Every transcript was read: more lines than the inputs alone hold.
        let checked = Int(stdout.split(separator: " ").first ?? "") ?? 0
        #expect(checked > 1500, "\(stdout)")
    }

    @Test("a schema that disagrees with typingd is caught", .enabled(if: validatorAvailable, "python3 -m jsonschema is not installed"))
    func disagreement() throws {
        // A transcript whose expected output claims typingd refused a valid command.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"{"cmd":"stats","id":1}"#.utf8 + [0x0A]).write(to: folder.appendingPathComponent("x.in.jsonl"))
        try Data(#"{"event":"error","line":1,"id":1,"code":"bad_field","message":"m","field":"id","extra":1}"#.utf8 + [0x0A])
            .write(to: folder.appendingPathComponent("x.out.jsonl"))
        let (stdout, stderr, status) = try ExampleProgramTests.run(ExampleProgramTests.which("python3") ?? "python3",
                                                                   ["schema/validate.py", folder.path])
        #expect(status == 1)
        #expect(stdout == "2 lines checked, 2 disagreements\n", "\(stdout)")
        #expect(stderr.contains("x.out.jsonl:1: event invalid") && stderr.contains("x.in.jsonl:1: typingd refused it"), "\(stderr)")
    }
}
