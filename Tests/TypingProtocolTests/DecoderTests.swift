import Testing
import TypingCore
import TypingProtocol

/// Decodes one line with a decoder for `clock`.
func decode(_ line: String, clock: SessionConfiguration.Clock = .manual) -> Result<Request, Event.Error> {
    let decoder = CommandDecoder(clock: clock)
    return Array(line.utf8).withUnsafeBytes { bytes in
        Result { () throws(Event.Error) in try decoder.decode(bytes, number: 7) }
    }
}

/// The error a line gets: "code field id", or "ok" when it decodes.
func verdict(_ line: String, clock: SessionConfiguration.Clock = .manual) -> String {
    switch decode(line, clock: clock) {
    case .success: return "ok"
    case .failure(let report):
        var parts = [report.code.rawValue]
        if let field = report.field { parts.append(field) }
        if let id = report.id { parts.append("id=\(id)") }
        #expect(report.line == 7)
        #expect(!report.message.isEmpty)
        return parts.joined(separator: " ")
    }
}

@Suite("Decoding commands")
struct DecoderTests {
    @Test("every command decodes with its fields")
    func commands() throws {
        let cases: [(String, Command)] = [
            (
                #"{"cmd":"join","conv":"g","user":"a","name":"Al"}"#,
                .join(conv: Identifier("g"), user: Identifier("a"), name: "Al")
            ),
            (#"{"cmd":"join","conv":"g","user":"a"}"#, .join(conv: Identifier("g"), user: Identifier("a"), name: nil)),
            (
                #"{"cmd":"type","conv":"g","user":"a"}"#,
                .type(conv: Identifier("g"), user: Identifier("a"), empty: false)
            ),
            (
                #"{"cmd":"type","conv":"g","user":"a","empty":true}"#,
                .type(conv: Identifier("g"), user: Identifier("a"), empty: true)
            ),
            (#"{"cmd":"send","conv":"g","user":"a"}"#, .send(conv: Identifier("g"), user: Identifier("a"))),
            (#"{"cmd":"leave","conv":"g","user":"a"}"#, .leave(conv: Identifier("g"), user: Identifier("a"))),
            (
                #"{"cmd":"remove","conv":"g","user":"a","by":"b"}"#,
                .remove(conv: Identifier("g"), user: Identifier("a"), by: Identifier("b"))
            ),
            (#"{"cmd":"offline","user":"a"}"#, .offline(user: Identifier("a"))),
            (#"{"cmd":"tick","at":5}"#, .tick),
            (#"{"cmd":"query","conv":"g"}"#, .query(conv: Identifier("g"))),
            (#"{"cmd":"stats"}"#, .stats)
        ]
        for (line, command) in cases {
            #expect(try decode(line).get().command == command, "\(line)")
        }
    }

    @Test(
        "id, at and unknown keys",
        arguments: [
            (#"{"cmd":"stats","id":"x"}"#, Request.ID.string("x"), nil as Int?),
            (#"{"cmd":"stats","id":-9007199254740991}"#, Request.ID.integer(-9_007_199_254_740_991), nil),
            (
                #"{"cmd":"tick","at":9007199254740991,"id":0,"extra":{"deep":[1,{"x":null}]}}"#, Request.ID.integer(0),
                9_007_199_254_740_991
            ),
            (#"{"cmd":"tick","at":0,"id":""}"#, Request.ID.string(""), 0)
        ])
    func envelope(line: String, id: Request.ID, at: Int?) throws {
        let request = try decode(line).get()
        #expect(request.id == id)
        #expect(request.at == at)
        #expect(request.line == 7)
    }

    @Test("restore: a screen's pending announcement and last announced text, with clear bad_field messages")
    func restore() throws {
        #expect(
            try decode(
                #"{"cmd":"restore","conv":"g","user":"a","pane":"side","announce_at":2200,"announced":"Ben is typing..."}"#
            )
            .get().command
                == .restore(
                    conv: Identifier("g"), user: Identifier("a"), pane: .side, announceAt: 2200,
                    announced: "Ben is typing..."))
        // Without keys, or with "" announced: nothing pending, nothing announced.
        #expect(
            try decode(#"{"cmd":"restore","conv":"g","user":"a","announced":""}"#).get().command
                == .restore(conv: Identifier("g"), user: Identifier("a")))
        let cases: [(String, String, String)] = [
            (#"{"cmd":"restore","user":"a"}"#, "missing_field conv", "restore needs \"conv\""),
            (#"{"cmd":"restore","conv":"g","user":"a","pane":"left"}"#, "bad_field pane", "\"pane\" must be"),
            (
                #"{"cmd":"restore","conv":"g","user":"a","announce_at":"soon"}"#, "bad_field announce_at",
                "\"announce_at\" must be an integer time in milliseconds from 0 to 9007199254740991, when the screen's pending announcement fires, not a string"
            ),
            (
                #"{"cmd":"restore","conv":"g","user":"a","announce_at":1.5}"#, "bad_field announce_at",
                "not a number with a fraction"
            ),
            (
                #"{"cmd":"restore","conv":"g","user":"a","announce_at":-1}"#, "bad_field announce_at",
                "\"announce_at\" must be from 0 to 9007199254740991 milliseconds, not -1"
            ),
            (
                #"{"cmd":"restore","conv":"g","user":"a","announced":null}"#, "bad_field announced",
                "\"announced\" must be a string, the text the screen last announced (\"\" for nothing), not null"
            ),
            // announce_at is checked before announced.
            (
                #"{"cmd":"restore","conv":"g","user":"a","announced":1,"announce_at":true}"#, "bad_field announce_at",
                "not true"
            )
        ]
        for (line, expected, message) in cases {
            #expect(verdict(line) == expected, "\(line)")
            if case .failure(let report) = decode(line) {
                #expect(report.message.contains(message), "\(report.message)")
            }
        }
    }

    @Test(
        "open with a thread and view list: field view, and for a side pane a message that says what a side pane takes")
    func listViewWithThread() {
        let cases: [(String, String, String)] = [
            (
                #"{"cmd":"open","conv":"g","user":"a","thread":"t","view":"list"}"#, "bad_field view",
                "a list view is always at the main timeline"
            ),
            (
                #"{"cmd":"open","conv":"g","user":"a","thread":"t","view":"list","pane":"side"}"#, "bad_field view",
                "open with \"pane\":\"side\" takes a \"thread\" and no \"view\":\"list\""
            ),
            (
                #"{"cmd":"open","conv":"g","user":"a","view":"list","pane":"side"}"#, "bad_field pane",
                "open with \"pane\":\"side\" takes a \"thread\" and no \"view\":\"list\""
            )
        ]
        for (line, expected, message) in cases {
            #expect(verdict(line) == expected, "\(line)")
            if case .failure(let report) = decode(line) {
                #expect(report.message.contains(message), "\(report.message)")
            }
        }
    }

    @Test(
        "every error code the decoder gives, with its field and id",
        arguments: [
            ("not json", "bad_json"),
            (#"{"cmd":"stats"} x"#, "bad_json"),
            (#"{"cmd":"stats","cmd":"stats"}"#, "bad_json"),
            (#"{"cmd":"stats","x":{"a":1,"a":2}}"#, "bad_json"),
            (#"{"cmd":"join","conv":"g","user":"\ud800"}"#, "bad_json"),
            (#"{"cmd":"join","conv":"g","user":"a\u0000"}"#, "bad_json"),
            (#"{"cmd":"stats","id":99999999999999999999}"#, "bad_json"),
            (#"{"cmd":"stats","x":1e999}"#, "bad_json"),
            (#"{"cmd":"stats","x":NaN}"#, "bad_json"),
            ("\u{FEFF}{\"cmd\":\"stats\"}", "bad_json"),
            (#"[{"cmd":"stats"}]"#, "not_object"),
            ("null", "not_object"),
            ("42", "not_object"),
            (#"{}"#, "missing_field cmd"),
            (#"{"cmd":null}"#, "bad_field cmd"),
            (#"{"cmd":"JOIN"}"#, "unknown_cmd cmd"),
            (#"{"cmd":"stats","id":true}"#, "bad_field id"),
            (#"{"cmd":"stats","id":1.0}"#, "bad_field id"),
            (#"{"cmd":"stats","id":9007199254740992}"#, "bad_field id"),
            (#"{"cmd":"stats","id":-9007199254740992}"#, "bad_field id"),
            (#"{"id":"x"}"#, "missing_field cmd id=string(\"x\")"),
            (#"{"cmd":"jump","id":7}"#, "unknown_cmd cmd id=integer(7)"),
            (#"{"cmd":"jump","id":[7]}"#, "bad_field id"),
            (#"{"cmd":"tick"}"#, "missing_field at"),
            (#"{"cmd":"tick","at":-1}"#, "bad_field at"),
            (#"{"cmd":"tick","at":9007199254740992}"#, "bad_field at"),
            (#"{"cmd":"tick","at":"5"}"#, "bad_field at"),
            (#"{"cmd":"stats","at":1.5}"#, "bad_field at"),
            (#"{"cmd":"join","user":"a"}"#, "missing_field conv"),
            (#"{"cmd":"join","conv":"","user":"a"}"#, "bad_field conv"),
            (#"{"cmd":"join","conv":["g"],"user":"a"}"#, "bad_field conv"),
            (#"{"cmd":"join","conv":"g"}"#, "missing_field user"),
            (#"{"cmd":"join","conv":"g","user":""}"#, "bad_field user"),
            (#"{"cmd":"join","conv":"g","user":"a","name":null}"#, "bad_field name"),
            (#"{"cmd":"type","conv":"g","user":"a","empty":1}"#, "bad_field empty"),
            (#"{"cmd":"remove","conv":"g","user":"a","by":""}"#, "bad_field by"),
            (#"{"cmd":"offline"}"#, "missing_field user"),
            (#"{"cmd":"query"}"#, "missing_field conv")
        ])
    func errors(line: String, expected: String) {
        #expect(verdict(line) == expected)
    }

    @Test(
        "checks run in the order id, cmd, at, conv, user, name, empty, by",
        arguments: [
            (#"{"id":{},"conv":""}"#, "bad_field id"),
            (#"{"id":1,"at":-1}"#, "missing_field cmd id=integer(1)"),
            (#"{"cmd":"join","at":-1,"conv":"","user":""}"#, "bad_field at"),
            (#"{"cmd":"join","user":"","conv":""}"#, "bad_field conv"),
            (#"{"cmd":"join","conv":"g","name":5,"user":5}"#, "bad_field user"),
            (#"{"cmd":"remove","conv":"g","user":"a","by":5,"empty":5}"#, "bad_field by"),
            (#"{"cmd":"type","conv":"g","user":"a","by":5,"empty":5}"#, "bad_field empty")
        ])
    func order(line: String, expected: String) {
        #expect(verdict(line) == expected)
    }

    @Test("fields a command does not read are ignored")
    func ignoredFields() {
        #expect(verdict(#"{"cmd":"stats","conv":5,"user":[],"name":1,"empty":"x","by":0}"#) == "ok")
        #expect(verdict(#"{"cmd":"offline","user":"a","conv":""}"#) == "ok")
        #expect(verdict(#"{"cmd":"send","conv":"g","user":"a","empty":"x"}"#) == "ok")
    }

    @Test("sizes are counted in UTF-8 bytes")
    func sizes() {
        let id256 = String(repeating: "é", count: 128)
        let id257 = id256 + "x"
        #expect(verdict(#"{"cmd":"join","conv":"\#(id256)","user":"a"}"#) == "ok")
        #expect(verdict(#"{"cmd":"join","conv":"\#(id257)","user":"a"}"#) == "bad_field conv")
        #expect(verdict(#"{"cmd":"stats","id":"\#(id256)"}"#) == "ok")
        #expect(verdict(#"{"cmd":"stats","id":"\#(id257)"}"#) == "bad_field id")
        let name1024 = String(repeating: "ab", count: 512)
        #expect(verdict(#"{"cmd":"join","conv":"g","user":"a","name":"\#(name1024)"}"#) == "ok")
        #expect(verdict(#"{"cmd":"join","conv":"g","user":"a","name":"\#(name1024)x"}"#) == "bad_field name")
        #expect(verdict(#"{"cmd":"join","conv":"g","user":"a","name":""}"#) == "ok")
    }

    @Test("raw NUL bytes and invalid UTF-8 are bad_json")
    func rawBytes() {
        let decoder = CommandDecoder(clock: .manual)
        for bytes: [UInt8] in [
            Array(#"{"cmd":"stats"}"#.utf8) + [0],
            Array(#"{"cmd":"join","conv":"g","user":""#.utf8) + [0xFF] + Array(#""}"#.utf8),
            Array(#"{"cmd":"join","conv":"g","user":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8),
            Array(#"{"cmd":"join","conv":"g","user":""#.utf8) + [0xC0, 0x80] + Array(#""}"#.utf8)
        ] {
            let result = bytes.withUnsafeBytes { raw in
                Result { () throws(Event.Error) in try decoder.decode(raw, number: 1) }
            }
            guard case .failure(let report) = result else {
                Issue.record("accepted \(bytes)")
                continue
            }
            #expect(report.code == .badJSON)
        }
    }

    @Test("bad_json messages carry jansson's text and column")
    func janssonText() throws {
        guard case .failure(let report) = decode(#"{"cmd":"stats"} trailing"#) else {
            Issue.record("accepted")
            return
        }
        #expect(report.column == 24, "jansson points at the last character it read")
        #expect(report.message == "invalid JSON at column 24: end of file expected near 'trailing'")
    }

    @Test("with the real clock, at and tick are clock_mode errors, checked in at's place")
    func realClock() {
        #expect(verdict(#"{"cmd":"stats","at":5}"#, clock: .real) == "clock_mode at")
        #expect(verdict(#"{"cmd":"stats","at":"x"}"#, clock: .real) == "clock_mode at")
        #expect(verdict(#"{"cmd":"tick"}"#, clock: .real) == "clock_mode cmd")
        #expect(verdict(#"{"cmd":"join","at":1,"conv":""}"#, clock: .real) == "clock_mode at")
        #expect(verdict(#"{"cmd":"jump","at":1}"#, clock: .real) == "unknown_cmd cmd")
        #expect(verdict(#"{"cmd":"stats"}"#, clock: .real) == "ok")
    }
}
