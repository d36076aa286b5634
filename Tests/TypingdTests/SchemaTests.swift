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
        let (stdout, stderr, status) = try ExampleProgramTests.run(
            try Self.validator(),
            ["schema/validate.py", "examples/transcripts"])
        #expect(status == 0, "\(stderr)")
        #expect(stdout.hasSuffix(" 0 disagreements\n"), "\(stdout)")
        // Every transcript was read: more lines than the inputs alone hold.
        let checked = Int(stdout.split(separator: " ").first ?? "") ?? 0
        #expect(checked > 1500, "\(stdout)")
    }

    /// Lines the goldens do not show (typingd does not write `announce` yet) or show only
    /// one way, each with what the schemas must say of it: valid or not.
    static let cases: [(schema: String, line: String, valid: Bool)] = [
        ("command", #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"is thinking"}"#, true),
        ("command", #"{"cmd":"type","conv":"g","user":"a","activity":"status"}"#, false),
        ("command", #"{"cmd":"type","conv":"g","user":"a","status":"is thinking"}"#, false),
        ("command", #"{"cmd":"type","conv":"g","user":"a","activity":"typing","status":"is thinking"}"#, false),
        ("command", #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":""}"#, false),
        ("command", #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":7}"#, false),
        ("command", #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"a\u007fb"}"#, false),
        ("command", #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"a\u009fb"}"#, false),
        ("command", #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"is\nhere"}"#, false),
        ("command", #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"a\u00a0b"}"#, true),
        (
            "command",
            #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":""#
                + String(repeating: "é", count: 128) + #""}"#, true
        ),
        (
            "command",
            #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":""#
                + String(repeating: "é", count: 128) + #"x"}"#, false
        ),
        ("event", #"{"event":"announce","at":5,"conv":"g","viewer":"b","text":"Ana is typing..."}"#, true),
        (
            "event",
            #"{"event":"announce","at":5,"conv":"g","thread":"t","viewer":"b","pane":"side","text":"Ana is typing..."}"#,
            true
        ),
        (
            "event", #"{"event":"announce","at":5,"conv":"g","viewer":"b","view":"list","text":"Ana is typing..."}"#,
            true
        ),
        ("event", #"{"event":"announce","at":5,"conv":"g","viewer":"b","text":""}"#, false),
        (
            "event", #"{"event":"announce","at":5,"conv":"g","viewer":"b","pane":"side","text":"Ana is typing..."}"#,
            false
        ),
        (
            "event",
            #"{"event":"announce","at":5,"conv":"g","thread":"t","viewer":"b","view":"list","text":"Ana is typing..."}"#,
            false
        ),
        (
            "event", #"{"event":"announce","at":5,"conv":"g","viewer":"b","typing":["a"],"text":"Ana is typing..."}"#,
            false
        ),
        ("event", #"{"event":"announce","at":5,"conv":"g","text":"Ana is typing..."}"#, false),
        ("event", #"{"event":"typing","at":1,"conv":"g","user":"a","state":"started","activity":"status"}"#, false),
        (
            "event",
            #"{"event":"typing","at":1,"conv":"g","user":"a","state":"changed","activity":"typing","status":"is here"}"#,
            false
        ),
        (
            "event",
            #"{"event":"typing","at":1,"conv":"g","user":"a","state":"stopped","reason":"send","status":"is here"}"#,
            false
        ),
        (
            "event", #"{"event":"streak","at":1,"conv":"g","user":"a","activity":"status","deadline":5,"keystroke":1}"#,
            false
        ),
        (
            "event", #"{"event":"streak","at":1,"conv":"g","user":"a","status":"is here","deadline":5,"keystroke":1}"#,
            false
        ),
        ("event", #"{"event":"error","line":1,"code":"missing_field","message":"m","field":"status"}"#, true),
        ("event", #"{"event":"error","line":1,"code":"missing_field","message":"m","field":"timeout_ms"}"#, false)
    ]

    @Test("lines the goldens do not show are judged as the protocol says")
    func listedCases() throws {
        let python = try Self.validator()
        let input = try JSONSerialization.data(
            withJSONObject: Self.cases.map {
                ["schema": $0.schema, "line": $0.line, "valid": $0.valid] as [String: Any]
            })
        let script = """
            import json, sys
            sys.path.insert(0, "schema")
            import validate
            schemas = {name: validate.Validator(json.load(open(f"schema/{name}.schema.json", encoding="utf-8")))
                       for name in ("command", "event")}
            cases = json.load(sys.stdin)
            wrong = 0
            for case in cases:
                try:
                    problem = validate.problem(schemas[case["schema"]], validate.read_line(case["line"].encode()))
                except validate.NotJSON as error:
                    problem = f"not JSON: {error}"
                if (problem is None) != case["valid"]:
                    wrong += 1
                    print(case["line"], "is", problem or "valid", file=sys.stderr)
            print(f"{len(cases)} cases, {wrong} wrong")
            """
        let (stdout, stderr, status) = try ExampleProgramTests.run(python, ["-c", script], input: input)
        #expect(status == 0, "\(stderr)")
        #expect(stdout == "\(Self.cases.count) cases, 0 wrong\n", "\(stdout)\n\(stderr)")
    }

    @Test("a schema that disagrees with typingd is caught")
    func disagreement() throws {
        let python = try Self.validator()
        // A transcript whose expected output claims typingd refused a valid command.
        let folder = try Daemon.temporaryFolder("schema")
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"{"cmd":"stats","id":1}"#.utf8 + [0x0A]).write(to: folder.appendingPathComponent("x.in.jsonl"))
        try Data(
            #"{"event":"error","line":1,"id":1,"code":"bad_field","message":"m","field":"id","extra":1}"#.utf8 + [0x0A]
        )
        .write(to: folder.appendingPathComponent("x.out.jsonl"))
        let (stdout, stderr, status) = try ExampleProgramTests.run(python, ["schema/validate.py", folder.path])
        #expect(status == 1)
        #expect(stdout == "2 lines checked, 2 disagreements\n", "\(stdout)")
        #expect(
            stderr.contains("x.out.jsonl:1: event invalid") && stderr.contains("x.in.jsonl:1: typingd refused it"),
            "\(stderr)")
    }
}
