import Foundation
import Testing
import TypingCore
import TypingProtocol

/// One hostile line and the error code it must get (nil: it must be accepted).
struct HostileLine: Sendable, CustomStringConvertible {
    let label: String
    let bytes: [UInt8]
    let code: String?

    init(_ label: String, _ text: String, _ code: String?) {
        self.init(label, Array(text.utf8), code)
    }

    init(_ label: String, _ bytes: [UInt8], _ code: String?) {
        self.label = label
        self.bytes = bytes
        self.code = code
    }

    var description: String { label }
}

/// Feeds each hostile line followed by a sentinel `stats` request, and checks:
/// every output line is one JSON object; each hostile line got exactly one error
/// with its line number and the expected code (or none, if accepted); every
/// sentinel was answered, so the session went on.
func checkHostile(
    _ cases: [HostileLine], configuration: SessionConfiguration = SessionConfiguration(drain: false),
    chunkSize: Int = .max
) {
    var input: [UInt8] = []
    var expected: [Int: HostileLine] = [:]
    var line = 0
    let setup = #"{"cmd":"join","conv":"g","user":"a","name":"A"}"# + "\n" + #"{"cmd":"join","conv":"g","user":"b"}"#
    input += Array((setup + "\n").utf8)
    line += 2
    for (index, hostile) in cases.enumerated() {
        line += 1
        expected[line] = hostile
        input += hostile.bytes + [0x0A]
        line += 1
        input += Array(#"{"cmd":"stats","id":"sentinel-\#(index)"}"#.utf8) + [0x0A]
    }
    let output = runSession(input, configuration: configuration, chunkSize: chunkSize)
    var errors: [Int: [String]] = [:]
    var sentinels = 0
    for text in output.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            Issue.record("not one JSON object: \(text.prefix(200))")
            continue
        }
        if object["event"] as? String == "error", let number = object["line"] as? Int {
            errors[number, default: []].append(object["code"] as? String ?? "?")
            #expect((object["message"] as? String)?.isEmpty == false)
        }
        if (object["id"] as? String)?.hasPrefix("sentinel-") == true { sentinels += 1 }
    }
    #expect(sentinels == cases.count, "every sentinel answered: the session went on")
    for (number, hostile) in expected {
        let got = errors[number] ?? []
        if let code = hostile.code {
            #expect(got == [code], "\(hostile.label) (line \(number)): errors \(got)")
        } else {
            #expect(got.isEmpty, "\(hostile.label) (line \(number)) should be accepted: \(got)")
        }
    }
    #expect(errors.keys.allSatisfy { expected[$0] != nil }, "no error on a sentinel line")
}

@Suite("Hostile input")
struct HostileInputTests {
    static let malformed: [HostileLine] = [
        HostileLine("truncated object", #"{"cmd":"join","conv":"g""#, "bad_json"),
        HostileLine("lone brace", "{", "bad_json"),
        HostileLine("truncated string", #"{"cmd":"sta"#, "bad_json"),
        HostileLine("truncated escape", #"{"cmd":"stats\"#, "bad_json"),
        HostileLine("trailing garbage", #"{"cmd":"stats"}x"#, "bad_json"),
        HostileLine("two objects", #"{"cmd":"stats"} {"cmd":"stats"}"#, "bad_json"),
        HostileLine("trailing comma", #"{"cmd":"stats",}"#, "bad_json"),
        HostileLine("single quotes", "{'cmd':'stats'}", "bad_json"),
        HostileLine("unquoted key", "{cmd:\"stats\"}", "bad_json"),
        HostileLine(
            "deep arrays", String(repeating: "[", count: 3000) + String(repeating: "]", count: 3000), "bad_json"),
        HostileLine(
            "deep objects", String(repeating: #"{"a":"#, count: 2100) + "1" + String(repeating: "}", count: 2100),
            "bad_json"),
        HostileLine(
            "deep but allowed",
            #"{"cmd":"stats","x":"# + String(repeating: "[", count: 2000) + String(repeating: "]", count: 2000) + "}",
            nil),
        HostileLine("duplicate keys", #"{"cmd":"stats","cmd":"stats"}"#, "bad_json"),
        HostileLine("nested duplicate keys", #"{"cmd":"stats","x":[{"k":1,"k":2}]}"#, "bad_json"),
        HostileLine(
            "huge integer", #"{"cmd":"stats","x":"# + "1" + String(repeating: "0", count: 400) + "}", "bad_json"),
        HostileLine(
            "huge negative integer", #"{"cmd":"stats","x":-"# + String(repeating: "9", count: 30) + "}", "bad_json"),
        HostileLine("huge real", #"{"cmd":"stats","x":1e999}"#, "bad_json"),
        HostileLine("tiny real", #"{"cmd":"stats","x":1e-999}"#, nil),
        HostileLine("NaN", #"{"cmd":"stats","x":NaN}"#, "bad_json"),
        HostileLine("Infinity", #"{"cmd":"stats","x":Infinity}"#, "bad_json"),
        HostileLine("-Infinity", #"{"cmd":"stats","x":-Infinity}"#, "bad_json"),
        HostileLine("lone high surrogate", #"{"cmd":"join","conv":"g","user":"\ud800"}"#, "bad_json"),
        HostileLine("lone low surrogate", #"{"cmd":"join","conv":"g","user":"\udc00x"}"#, "bad_json"),
        HostileLine("paired surrogates", #"{"cmd":"join","conv":"g","user":"\ud83d\ude00"}"#, nil),
        HostileLine("escaped NUL in a value", #"{"cmd":"join","conv":"g","user":"a\u0000b"}"#, "bad_json"),
        HostileLine("escaped NUL in a key", #"{"cmd":"stats","\u0000":1}"#, "bad_json"),
        HostileLine("raw NUL first", [0] + Array(#"{"cmd":"stats"}"#.utf8), "bad_json"),
        HostileLine("raw NUL inside", Array(#"{"cmd":"st"#.utf8) + [0] + Array(#"ats"}"#.utf8), "bad_json"),
        HostileLine("raw NUL last", Array(#"{"cmd":"stats"}"#.utf8) + [0], "bad_json"),
        HostileLine(
            "invalid byte", Array(#"{"cmd":"join","conv":"g","user":""#.utf8) + [0xFF] + Array(#""}"#.utf8), "bad_json"),
        HostileLine(
            "overlong encoding", Array(#"{"cmd":"join","conv":"g","user":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8),
            "bad_json"),
        HostileLine(
            "encoded surrogate",
            Array(#"{"cmd":"join","conv":"g","user":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8), "bad_json"),
        HostileLine(
            "truncated sequence", Array(#"{"cmd":"join","conv":"g","user":""#.utf8) + [0xE2, 0x82] + Array(#""}"#.utf8),
            "bad_json"),
        HostileLine(
            "past U+10FFFF",
            Array(#"{"cmd":"join","conv":"g","user":""#.utf8) + [0xF4, 0x90, 0x80, 0x80] + Array(#""}"#.utf8),
            "bad_json"),
        HostileLine("binary garbage", (0..<256).map { UInt8(($0 * 37 + 11) % 256) }.filter { $0 != 0x0A }, "bad_json"),
        HostileLine("byte order mark", [0xEF, 0xBB, 0xBF] + Array(#"{"cmd":"stats"}"#.utf8), "bad_json"),
        HostileLine("CR only", [0x0D], nil),
        HostileLine("two CRs", [0x0D, 0x0D], "bad_json"),
        HostileLine("CR inside", Array(#"{"cmd":"stats"}"#.utf8) + [0x0D, 0x0D], nil),
        HostileLine("spaces and tabs", "  \t \t ", nil),
        HostileLine("form feed", "\u{0C}", "bad_json"),
        HostileLine("scalar", "42", "not_object"),
        HostileLine("null", "null", "not_object"),
        HostileLine("array of commands", #"[{"cmd":"stats"}]"#, "not_object")
    ]

    @Test("malformed JSON of every shape: one error each, and the session goes on")
    func malformedJSON() {
        checkHostile(Self.malformed)
    }

    @Test("the same, read a few bytes at a time", arguments: [1, 7, 64])
    func malformedInChunks(size: Int) {
        checkHostile(Self.malformed, chunkSize: size)
    }

    /// Every field, given every wrong type: bad_field each time.
    static var wrongTypes: [HostileLine] {
        let wrong = ["null", "true", "1", "1.5", #""s""#, "[]", "{}", "-1"]
        let bases: [(field: String, template: String, accepts: Set<String>)] = [
            ("id", #"{"cmd":"stats","id":X}"#, ["1", #""s""#, "-1"]),
            ("cmd", #"{"cmd":X}"#, []),
            ("at", #"{"cmd":"tick","at":X}"#, ["1"]),
            ("conv", #"{"cmd":"join","conv":X,"user":"a"}"#, [#""s""#]),
            ("user", #"{"cmd":"join","conv":"g","user":X}"#, [#""s""#]),
            ("name", #"{"cmd":"join","conv":"g","user":"a","name":X}"#, [#""s""#]),
            ("empty", #"{"cmd":"type","conv":"g","user":"a","empty":X}"#, ["true"]),
            ("by", #"{"cmd":"remove","conv":"g","user":"zz","by":X}"#, [#""s""#])
        ]
        var lines: [HostileLine] = []
        for base in bases {
            for value in wrong {
                let text = base.template.replacingOccurrences(of: "X", with: value)
                let code: String?
                if base.accepts.contains(value) {
                    code = base.field == "by" || (base.field == "cmd") ? "not_member" : nil
                } else if base.field == "cmd" && value == #""s""# {
                    code = "unknown_cmd"
                } else {
                    code = "bad_field"
                }
                lines.append(
                    HostileLine(
                        "\(base.field)=\(value)", text, base.field == "by" && code != "bad_field" ? "not_member" : code)
                )
            }
        }
        return lines
    }

    @Test("a wrong type for every field is bad_field")
    func wrongTypesForEveryField() {
        checkHostile(Self.wrongTypes)
    }

    @Test("empty and oversized ids, names and cmd")
    func sizes() {
        let big = String(repeating: "x", count: 257), huge = String(repeating: "n", count: 1025)
        checkHostile([
            HostileLine("empty conv", #"{"cmd":"join","conv":"","user":"a"}"#, "bad_field"),
            HostileLine("empty user", #"{"cmd":"join","conv":"g","user":""}"#, "bad_field"),
            HostileLine("empty by", #"{"cmd":"remove","conv":"g","user":"b","by":""}"#, "bad_field"),
            HostileLine("empty name is fine", #"{"cmd":"join","conv":"g","user":"a","name":""}"#, nil),
            HostileLine("empty id is fine", #"{"cmd":"tick","at":0,"id":""}"#, nil),
            HostileLine("257-byte conv", #"{"cmd":"join","conv":"\#(big)","user":"a"}"#, "bad_field"),
            HostileLine("257-byte user", #"{"cmd":"join","conv":"g","user":"\#(big)"}"#, "bad_field"),
            HostileLine("257-byte id", #"{"cmd":"stats","id":"\#(big)"}"#, "bad_field"),
            HostileLine("1025-byte name", #"{"cmd":"join","conv":"g","user":"a","name":"\#(huge)"}"#, "bad_field"),
            HostileLine("empty cmd", #"{"cmd":""}"#, "unknown_cmd"),
            HostileLine("huge cmd", #"{"cmd":"\#(String(repeating: "j", count: 100_000))"}"#, "unknown_cmd"),
            HostileLine("cmd with NUL escape", #"{"cmd":"join\u0000"}"#, "bad_json")
        ])
    }

    @Test("lines of several MiB: too long by default, fine when allowed")
    func hugeLines() {
        let padding = String(repeating: "p", count: 3 << 20)
        let line = HostileLine("3 MiB line", #"{"cmd":"stats","pad":"\#(padding)"}"#, "line_too_long")
        checkHostile([line], chunkSize: 1 << 16)
        var roomy = SessionConfiguration(drain: false)
        roomy.maxLineBytes = 4 << 20
        checkHostile([HostileLine("3 MiB line allowed", line.bytes, nil)], configuration: roomy, chunkSize: 1 << 16)
    }

    @Test(
        "a line over the limit is never held: the framer keeps nothing of it while skipping; an allowed long line's copy is freed"
    )
    func framerHoldsLittle() {
        let line =
            Array(#"{"cmd":"stats","pad":""#.utf8) + [UInt8](repeating: 0x70, count: 3 << 20) + Array("\"}\n".utf8)
        var session = Session(configuration: SessionConfiguration(maxLineBytes: 1 << 20), sink: [UInt8]())
        var peak = 0
        for start in stride(from: 0, to: line.count, by: 1 << 16) {
            _ = line[start..<min(line.count, start + (1 << 16))].withUnsafeBytes { session.feed($0) }
            peak = max(peak, session.framer.pending.capacity)
        }
        #expect(peak <= (1 << 20) + (1 << 17), "the framer held \(peak) bytes of a line it skips")
        #expect(session.framer.pending.capacity == 0)
        var roomy = Session(configuration: SessionConfiguration(maxLineBytes: 4 << 20), sink: [UInt8]())
        for start in stride(from: 0, to: line.count, by: 1 << 16) {
            _ = line[start..<min(line.count, start + (1 << 16))].withUnsafeBytes { roomy.feed($0) }
        }
        roomy.flush()
        #expect(String(decoding: roomy.sink, as: UTF8.self).hasPrefix(#"{"event":"stats""#))
        #expect(
            roomy.framer.pending.capacity == 0, "the copy of a long line is not kept: \(roomy.framer.pending.capacity)")
    }

    @Test("names full of controls, overrides and zalgo are accepted, and no text carries a control character")
    func hostileNames() throws {
        let zalgo = "Z" + String(repeating: "\u{0336}\u{0353}\u{036A}", count: 100) + "a"
        let names = [
            "\u{1B}[2J\u{1B}[31mred\u{7}", "\u{202E}txt.exe\u{202C}", zalgo, "\u{85}\u{9B}\u{7F}x",
            String(repeating: "\u{200B}", count: 50), "\t\n\r", "\u{FEFF}bom"
        ]
        var lines = #"{"cmd":"join","conv":"g","user":"v"}"# + "\n"
        for (index, name) in names.enumerated() {
            let quoted = String(
                decoding: try JSONSerialization.data(withJSONObject: [name], options: .fragmentsAllowed), as: UTF8.self)
            lines += #"{"cmd":"join","conv":"g","user":"u\#(index)","name":\#(quoted.dropFirst().dropLast())}"# + "\n"
            lines += #"{"cmd":"type","conv":"g","user":"u\#(index)","at":\#(index)}"# + "\n"
        }
        let output = runSession(Array(lines.utf8), configuration: SessionConfiguration(drain: true))
        var texts = 0
        for text in output.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            #expect(object["event"] as? String != "error", "\(text)")
            if let phrase = object["text"] as? String {
                texts += 1
                #expect(
                    !phrase.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
                    "control character in \(phrase.debugDescription)")
            }
        }
        #expect(texts > names.count)
    }
}
