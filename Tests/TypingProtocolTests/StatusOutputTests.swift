import Testing
import TypingCore
import TypingProtocol

/// Status words in the output formats (Protocol.md#status-in-ones-own-words): after
/// `activity` in JSON, quoted in text; user text, escaped as such.
@Suite("Status words in output")
struct StatusOutputTests {
    static let input = [
        #"{"cmd":"join","conv":"c","user":"ana","name":"Ana"}"#,
        #"{"cmd":"join","conv":"c","user":"bot","name":"Bot"}"#,
        #"{"cmd":"type","conv":"c","user":"bot","activity":"status","status":"is \"x\" {0} \u202e\u061c\u200d\u2028","at":5}"#,
        #"{"cmd":"type","conv":"c","user":"bot","activity":"status","status":"{verb}","at":6}"#,
        #"{"cmd":"snapshot","at":7}"#,
        #"{"cmd":"type","conv":"c","user":"bot","activity":"sending_file","at":8}"#
    ]

    /// `lines` through a session writing `format`.
    static func run<Format: EventFormat & ~Copyable>(_ format: consuming Format) -> String {
        var session = Session(
            configuration: SessionConfiguration(engine: EngineConfiguration(typingEvents: true)),
            format: format, sink: [UInt8]())
        _ = Array((input.joined(separator: "\n") + "\n").utf8).withUnsafeBytes { session.feed($0) }
        session.finish()
        session.flush()
        return String(decoding: session.sink, as: UTF8.self)
    }

    @Test(
        "JSON: status after activity in started and changed, in the streak event, in no stopped event; escaped as user text"
    )
    func json() {
        let lines = Self.run(JSONFormat()).split(separator: "\n").map(String.init)
        #expect(
            lines.contains(
                #"{"event":"typing","at":5,"conv":"c","user":"bot","state":"started","activity":"status","status":"is \"x\" {0} \#u{202E}\#u{61C}\#u{200D}\u2028"}"#
            ), "\(lines)")
        #expect(
            lines.contains(
                #"{"event":"indicator","at":5,"conv":"c","viewer":"ana","typing":["bot"],"activities":["status"],"text":"Bot is \"x\" {0} \#u{202E}\#u{61C}\#u{200D}\u2028..."}"#
            ), "\(lines)")
        #expect(
            lines.contains(
                #"{"event":"typing","at":6,"conv":"c","user":"bot","state":"changed","activity":"status","status":"{verb}"}"#
            ))
        #expect(
            lines.contains(
                #"{"event":"indicator","at":6,"conv":"c","viewer":"ana","typing":["bot"],"activities":["status"],"text":"Bot {verb}..."}"#
            ))
        #expect(
            lines.contains(
                #"{"event":"streak","at":7,"conv":"c","user":"bot","activity":"status","status":"{verb}","deadline":3006,"keystroke":1}"#
            ), "\(lines)")
        #expect(
            lines.contains(
                #"{"event":"typing","at":8,"conv":"c","user":"bot","state":"changed","activity":"sending_file"}"#))
        #expect(!lines.contains { $0.contains("\"stopped\"") && $0.contains("\"status\":") })
    }

    @Test("text: the words quoted after the activity, unsafe characters as \\u{…}, placeholders as given")
    func text() {
        let text = Self.run(TextFormat())
        #expect(
            text.contains(#"bot started typing (status "is \"x\" {0} \u{202e}\u{61c}"# + "\u{200D}" + #"\u{2028}")"#),
            "\(text)")
        #expect(text.contains(#"ana sees: Bot is "x" {0} \u{202e}\u{61c}"# + "\u{200D}" + #"\u{2028}..."#), "\(text)")
        #expect(text.contains(#"bot is now status "{verb}""#), "\(text)")
        #expect(text.contains(#"streak bot status "{verb}" until "#), "\(text)")
        #expect(text.contains("bot is now sending_file\n"), "\(text)")
        #expect(!text.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{61C}" || $0 == "\u{2028}" })
    }
}
