import Testing
import TypingCore
import TypingProtocol

/// The `status` field of `type` (Protocol.md#status-in-ones-own-words).
@Suite("Decoding status words")
struct StatusDecoderTests {
    @Test("status words decode with their activity, byte for byte")
    func decodes() throws {
        for words in [
            "is thinking", "é", "{0} {verb} {names}", "is \u{202E}gnikniht", "\u{61C}\u{200D}x", "\u{2028}", "a\"b\\c",
            String(repeating: "x", count: 256), String(repeating: "é", count: 128)
        ] {
            let line = #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"# + Self.json(words) + "}"
            let command = try decode(line).get().command
            guard case let .type(_, _, _, status, _, activity, _) = command else {
                Issue.record("\(command)")
                continue
            }
            #expect(activity == .status)
            #expect(status.map { Array($0.utf8) } == Array(words.utf8), "\(words)")
        }
        #expect(
            try decode(#"{"cmd":"type","conv":"g","user":"a","activity":"typing"}"#).get().command
                == .type(conv: Identifier("g"), user: Identifier("a")))
    }

    @Test(
        "every bad status shape is refused, naming the field",
        arguments: [
            (#"{"cmd":"type","conv":"g","user":"a","activity":"status"}"#, "missing_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","status":"is thinking"}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"typing","status":"is thinking"}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"sending_file","status":"x"}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","status":null}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":""}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":7}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":null}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":["x"]}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":true}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"a\u0001"}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"a\nb"}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"\u001f"}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"x\u007f"}"#, "bad_field status"),
            (
                #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"is\u0085thinking"}"#,
                "bad_field status"
            ),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"\u0080"}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"\u009f"}"#, "bad_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"Status","status":"x"}"#, "bad_field activity")
        ])
    func refused(line: String, expected: String) {
        #expect(verdict(line) == expected)
    }

    @Test("U+00A0 and U+00A0-like neighbours of the C1 controls are words")
    func notControls() {
        for words in ["\u{A0}", "\u{7E}", "\u{100}", "\u{2029}x"] {
            #expect(
                verdict(#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"# + Self.json(words) + "}")
                    == "ok", "\(words.unicodeScalars.map(\.value))")
        }
    }

    @Test("the most is 256 bytes, counted in UTF-8")
    func size() {
        let at256 = String(repeating: "€", count: 85) + "x" // 255 + 1
        #expect(at256.utf8.count == 256)
        #expect(verdict(#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"\#(at256)"}"#) == "ok")
        #expect(
            verdict(#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"\#(at256)y"}"#)
                == "bad_field status")
        #expect(
            verdict(
                #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"\#(String(repeating: "€", count: 86))"}"#
            )
                == "bad_field status")
    }

    @Test(
        "status is checked after activity and before timeout_ms",
        arguments: [
            (#"{"cmd":"type","conv":"g","user":"a","empty":1,"activity":"status"}"#, "bad_field empty"),
            (#"{"cmd":"type","conv":"g","user":"a","thread":"","status":5}"#, "bad_field thread"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"x","status":5}"#, "bad_field activity"),
            (#"{"cmd":"type","conv":"g","user":"a","activity":"status","timeout_ms":0}"#, "missing_field status"),
            (#"{"cmd":"type","conv":"g","user":"a","status":"x","timeout_ms":-1}"#, "bad_field status"),
            (
                #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"","timeout_ms":"x"}"#,
                "bad_field status"
            ),
            (
                #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"x","timeout_ms":-1}"#,
                "bad_field timeout_ms"
            ),
            (#"{"id":3,"cmd":"type","conv":"g","user":"a","activity":"status"}"#, "missing_field status id=integer(3)")
        ])
    func order(line: String, expected: String) {
        #expect(verdict(line) == expected)
    }

    @Test("messages name the field and what was wrong")
    func messages() {
        func message(_ line: String) -> String {
            guard case .failure(let report) = decode(line) else { return "ok" }
            return report.message
        }
        #expect(message(#"{"cmd":"type","conv":"g","user":"a","activity":"status"}"#).contains("needs \"status\""))
        #expect(message(#"{"cmd":"type","conv":"g","user":"a","status":"x"}"#).contains("activity is typing"))
        #expect(
            message(#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":""}"#).contains(
                "must not be empty"))
        #expect(
            message(
                #"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"\#(String(repeating: "x", count: 300))"}"#
            )
            .contains("300 bytes"))
        #expect(
            message(#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":"ab\u0085"}"#).contains(
                "U+0085 at byte 3"))
        #expect(
            message(#"{"cmd":"type","conv":"g","user":"a","activity":"status","status":7}"#).contains("not an integer"))
    }

    @Test("other commands ignore a status field, as any field they do not read")
    func ignored() {
        #expect(verdict(#"{"cmd":"send","conv":"g","user":"a","status":5}"#) == "ok")
        #expect(verdict(#"{"cmd":"join","conv":"g","user":"a","status":""}"#) == "ok")
    }

    /// `text` as the inside of a JSON string.
    static func json(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
