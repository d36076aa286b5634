import Foundation
import Testing
import TypingCore
@testable import TypingProtocol

/// `--format text` at a terminal: whatever the input holds, no control character
/// but the LF that ends each event, and no bidirectional control, reaches the screen.
@Suite("Text format")
struct TextFormatTests {
    /// `lines` through a text session.
    static func text(_ lines: [String]) -> String {
        var session = Session(configuration: SessionConfiguration(engine: EngineConfiguration(typingEvents: true)), format: TextFormat(), sink: [UInt8]())
        _ = Array((lines.joined(separator: "\n") + "\n").utf8).withUnsafeBytes { session.feed($0) }
        session.finish()
        session.flush()
        return String(decoding: session.sink, as: UTF8.self)
    }

    static let hostile = ["\u{1B}[31m", "\n", "\r", "\u{7}", "\u{7F}", "\u{85}", "\u{9B}2J", "\u{2028}", "\u{2029}",
                          "\u{202E}", "\u{2066}", "\u{200F}", "\u{61C}", "\u{0}"]

    @Test("hostile bytes in error messages, names, ids and conversations are escaped", arguments: hostile)
    func escapes(_ evil: String) throws {
        let quoted = String(decoding: try JSONSerialization.data(withJSONObject: [evil], options: .fragmentsAllowed), as: UTF8.self)
            .dropFirst().dropLast()
        let output = Self.text([
            #"{"cmd":"a\#(quoted)b"}"#,                                              // unknown command, quoted in the message
            #"{"cmd":"join","conv":"c\#(quoted)","user":"u\#(quoted)","name":"N\#(quoted)x"}"#,
            #"{"cmd":"join","conv":"c\#(quoted)","user":"v","name":"V"}"#,
            #"{"cmd":"type","conv":"c\#(quoted)","user":"u\#(quoted)","at":5}"#,
            #"{"cmd":"query","conv":"c\#(quoted)","id":"q\#(quoted)"}"#,
            #"{"cmd":"snapshot"}"#,
            "{\"cmd\":\"stats\",\"id\":\"\(quoted)\"" + String(repeating: " ", count: 3),   // bad JSON
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
        #expect(output == #"error line 1 unknown_cmd: unknown command "a\u{a}b\u{1b}[31mX"; the commands are join, type, send, leave, remove, offline, open, close, user, tick, query, stats, snapshot"# + "\n")
    }

    @Test("the snapshot line counts in words: 1 member in 1 conversation, 2 members")
    func snapshotCounts() {
        let one = Self.text([#"{"cmd":"join","conv":"c","user":"a"}"#, #"{"cmd":"snapshot"}"#])
        #expect(one.hasSuffix("snapshot: 1 member in 1 conversation, 0 typing\n"), "\(one)")
        let two = Self.text([#"{"cmd":"join","conv":"c","user":"a"}"#, #"{"cmd":"join","conv":"d","user":"a"}"#, #"{"cmd":"snapshot"}"#])
        #expect(two.hasSuffix("snapshot: 2 members in 2 conversations, 0 typing\n"), "\(two)")
    }
}
