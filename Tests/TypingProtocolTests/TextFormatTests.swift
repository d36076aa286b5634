import Foundation
import Testing
import TypingCore
import TypingProtocol

/// `--format text` at a terminal: whatever the input holds, no control character
/// but the LF that ends each event, and no bidirectional control, reaches the screen.
@Suite("Text format")
struct TextFormatTests {
    /// `lines` through a text session.
    static func text(
        _ lines: [String], engine: EngineConfiguration = EngineConfiguration(typingEvents: true),
        maxLineBytes: Int = SessionConfiguration.defaultMaxLineBytes
    ) -> String {
        var session = Session(
            configuration: SessionConfiguration(engine: engine, maxLineBytes: maxLineBytes),
            format: TextFormat(), sink: [UInt8]())
        _ = Array((lines.joined(separator: "\n") + "\n").utf8).withUnsafeBytes { session.feed($0) }
        session.finish()
        session.flush()
        return String(decoding: session.sink, as: UTF8.self)
    }

    /// The bidirectional controls: a display name holding U+202E reverses the rest
    /// of its line on a terminal.
    static let bidirectional: [Unicode.Scalar] = [
        "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}",
        "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
        "\u{200E}", "\u{200F}", "\u{61C}"
    ]

    static let hostile =
        [
            "\u{1B}[31m", "\n", "\r", "\u{7}", "\u{7F}", "\u{85}", "\u{9B}2J", "\u{2028}", "\u{2029}",
            "\u{0}"
        ] + bidirectional.map { String($0) }

    @Test("hostile bytes in error messages, names, ids and conversations are escaped", arguments: hostile)
    func escapes(_ evil: String) throws {
        let quoted = String(
            decoding: try JSONSerialization.data(withJSONObject: [evil], options: .fragmentsAllowed), as: UTF8.self
        )
        .dropFirst().dropLast()
        let output = Self.text([
            #"{"cmd":"a\#(quoted)b"}"#, // unknown command, quoted in the message
            #"{"cmd":"join","conv":"c\#(quoted)","user":"u\#(quoted)","name":"N\#(quoted)x"}"#,
            #"{"cmd":"join","conv":"c\#(quoted)","user":"v","name":"V"}"#,
            #"{"cmd":"type","conv":"c\#(quoted)","user":"u\#(quoted)","at":5}"#,
            #"{"cmd":"query","conv":"c\#(quoted)","id":"q\#(quoted)"}"#,
            #"{"cmd":"snapshot"}"#,
            "{\"cmd\":\"stats\",\"id\":\"\(quoted)\"" + String(repeating: " ", count: 3) // bad JSON
        ])
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count >= 6, "\(output)")
        for scalar in output.unicodeScalars where scalar != "\n" {
            #expect(!TextFormat.isUnsafe(scalar), "U+\(String(scalar.value, radix: 16)) written raw in:\n\(output)")
        }
        #expect(output.hasSuffix("\n"))
    }

    @Test("the reported line: an unknown command with a newline and a colour escape prints one line, escaped")
    func reported() {
        let output = Self.text([#"{"cmd":"a\nb\u001b[31mX"}"#])
        #expect(
            output
                == #"0.000  error line 1 unknown_cmd: unknown command "a\u{a}b\u{1b}[31mX"; the commands are join, type, send, leave, remove, offline, open, close, user, tick, query, stats, snapshot, forget, restore"#
                + "\n")
    }

    @Test("a member line says each screen's pending announcement and what it announced")
    func memberAnnouncements() {
        let text = Self.text(
            [
                #"{"cmd":"join","conv":"c","user":"a","name":"Ana"}"#, #"{"cmd":"join","conv":"c","user":"b"}"#,
                #"{"cmd":"open","conv":"c","user":"b","thread":"t","pane":"side"}"#,
                #"{"cmd":"type","conv":"c","user":"a","at":0}"#, #"{"cmd":"tick","at":1000}"#,
                #"{"cmd":"join","conv":"c","user":"d"}"#,
                #"{"cmd":"type","conv":"c","user":"d","thread":"t","at":1200}"#, #"{"cmd":"snapshot","at":1200}"#
            ], engine: EngineConfiguration(announceAfter: 1000))
        #expect(
            text.contains(
                #"member b, side pane at thread t, screen announced "Ana is typing...", side pane announces at 2.200 (rank 2)"#
            ),
            "\(text)")
    }

    @Test("the snapshot line counts in words: 1 member in 1 conversation, 2 members")
    func snapshotCounts() {
        let one = Self.text([#"{"cmd":"join","conv":"c","user":"a"}"#, #"{"cmd":"snapshot"}"#])
        #expect(one.hasSuffix("snapshot: 1 member in 1 conversation, 0 typing\n"), "\(one)")
        let two = Self.text([
            #"{"cmd":"join","conv":"c","user":"a"}"#, #"{"cmd":"join","conv":"d","user":"a"}"#, #"{"cmd":"snapshot"}"#
        ])
        #expect(two.hasSuffix("snapshot: 2 members in 2 conversations, 0 typing\n"), "\(two)")
    }

    @Test(
        "a bidirectional control is written as \\u{…} in events and in what terminalSafe returns (stderr, check's reports)",
        arguments: bidirectional)
    func bidirectionalControls(_ scalar: Unicode.Scalar) {
        let hex = String(scalar.value, radix: 16)
        let output = Self.text([
            #"{"cmd":"join","conv":"c","user":"u","name":"Eve\#(scalar)gnp.exe"}"#,
            #"{"cmd":"join","conv":"c","user":"v"}"#,
            #"{"cmd":"type","conv":"c","user":"u","at":5}"#
        ])
        #expect(output.contains("v sees: Eve\\u{\(hex)}gnp.exe is typing..."), "\(output)")
        #expect(!output.unicodeScalars.contains(scalar), "\(output)")
        let safe = TextFormat.terminalSafe("file \(scalar)name\nline 2")
        #expect(safe == "file \\u{\(hex)}name\nline 2")
    }

    @Test("a path is one line: unsafe characters and line breaks as \\u{…}, bytes that are not UTF-8 as \\xFF")
    func paths() {
        #expect(TextFormat.path(Array("dir/é.json".utf8)) == "dir/é.json")
        #expect(TextFormat.path(Array("a\nb\r\u{1B}[2J\u{202E}.json".utf8)) == "a\\u{a}b\\u{d}\\u{1b}[2J\\u{202e}.json")
        #expect(TextFormat.path([0x61, 0xFF, 0x2F, 0xC3, 0x0A, 0xE2, 0x82]) == "a\\xFF/\\xC3\\u{a}\\xE2\\x82")
        #expect(TextFormat.path([0x00, 0x05]) == "\\u{0}\\u{5}")
        #expect(TextFormat.path("x\ny") == "x\\u{a}y")
        // Through terminalSafe (what stderr gets), it stays one line.
        #expect(!TextFormat.terminalSafe("--phrases " + TextFormat.path("a\nb")).contains("\n"))
    }

    @Test("terminalSafe keeps every line break, a CR before one included (escaped on its own line)")
    func terminalSafeCRLF() {
        #expect(TextFormat.terminalSafe("a\r\nb\u{1B}\nc") == "a\\u{d}\nb\\u{1b}\nc")
    }

    @Test("every line starts with its time, ok and error lines too: the time the line was applied or refused at")
    func timeOnEveryLine() throws {
        let output = Self.text([
            #"{"cmd":"join","conv":"team","user":"alice","name":"Alice","id":1}"#,
            #"{"cmd":"join","conv":"team","user":"bob","name":"Bob"}"#,
            #"{"cmd":"type","conv":"team","user":"alice","at":12345,"id":"k"}"#,
            "not json",
            #"{"cmd":"type","conv":"team","user":"bob","at":100}"#,
            #"{"cmd":"query","conv":"team"}"#,
            #"{"cmd":"stats"}"#,
            #"{"cmd":"snapshot"}"#
        ])
        let lines = output.split(separator: "\n")
        #expect(lines.count >= 12, "\(output)")
        let stamp = try Regex(#"^[0-9]+\.[0-9]{3}  \S"#)
        for line in lines {
            #expect(line.firstMatch(of: stamp) != nil, "no time column: \(line)")
        }
        #expect(lines.first == "0.000  ok line 1 (id 1)", "\(output)")
        #expect(lines.contains("12.345  ok line 3 (id \"k\")"), "\(output)")
        #expect(
            lines.contains("12.345  error line 4 bad_json: invalid JSON at column 3: invalid token near 'not'"),
            "\(output)")
        #expect(
            lines.contains(
                "12.345  error line 5 time_backwards: at 100 is earlier than the current time 12345; time never goes back"
            ),
            "\(output)")
    }

    @Test("an indicator whose ids leave typers out (--max-listed) says how many of them its ids list")
    func more() {
        let joins = ["v", "a", "b", "c", "d"].map {
            #"{"cmd":"join","conv":"g","user":"\#($0)","name":"\#($0.uppercased())"}"#
        }
        let types = ["a", "b", "c", "d"].enumerated().map {
            #"{"cmd":"type","conv":"g","user":"\#($1)","at":\#($0 + 1)}"#
        }
        let output = Self.text(joins + types, engine: EngineConfiguration(maxListed: 2))
        #expect(output.contains("0.003  g  v sees: A, B, and C are typing... (typing lists 2 of 3)\n"), "\(output)")
        #expect(
            output.contains("0.004  g  v sees: A, B, and 2 others are typing... (typing lists 2 of 4)\n"), "\(output)")
        #expect(output.contains("0.002  g  v sees: A and B are typing...\n"), "\(output)")
    }

    @Test("a line over a --max-line-bytes of 1 is longer than 1 byte, not 1 bytes")
    func oneByte() {
        #expect(
            Self.text(["ab"], maxLineBytes: 1)
                == "0.000  error line 1 line_too_long: line 1 is longer than 1 byte (--max-line-bytes); it was skipped\n"
        )
        #expect(Self.text(["abc"], maxLineBytes: 2).contains("longer than 2 bytes"))
    }
}
