import Testing
import TypingCore
import TypingProtocol
import TypingTestSupport

/// Status words (Protocol.md#status-in-ones-own-words) are user text in every
/// phrase and `typing` event: the bound on one command's output counts them as
/// they are written, in JSON and in text, whose escapes are wider.
@Suite("Output per line: status words")
struct OutputBoundStatusTests {
    /// The bytes `events` take in `format`.
    static func size<Format: EventFormat & ~Copyable>(_ events: [Event], in format: consuming Format) -> Int {
        var format = format
        var buffer = OutputBuffer()
        for event in events { format.encode(event, into: &buffer) }
        return buffer.count
    }

    /// Words of up to 256 bytes whose characters are the widest in output: U+061C
    /// (2 bytes, `\u{61c}` in text), U+200E and U+2028 (3 bytes, `\u{…}` in text,
    /// `\u2028` in JSON), `"` and `\` (escaped in JSON and quoted text), and
    /// placeholders, which stay as they are.
    static let words: [String] = [
        String(repeating: "\u{61C}", count: 128),
        String(repeating: "\u{200E}", count: 85) + "x",
        String(repeating: "\u{2028}", count: 85) + "y",
        String(repeating: "\"", count: 256),
        String(repeating: "\\", count: 255) + "z",
        String(repeating: "\u{61C}\"", count: 85) + "\"",
        "is thinking", "{0}", "{verb}", "\u{202E}x\u{200D}"
    ]

    @Test("every word list above is within the protocol's 256 bytes")
    func wordsAreValid() {
        for words in Self.words { #expect((1...256).contains(words.utf8.count), "\(words.utf8.count)") }
    }

    @Test(
        "random commands with status words never write more than their bound, in JSON or text",
        arguments: [
            EngineConfiguration(typingEvents: true),
            EngineConfiguration(style: .compact, audience: .open, order: .recent, maxListed: 2),
            EngineConfiguration(typingEvents: true, order: .name, maxListed: 1, phrases: OutputBoundTests.book)
        ])
    func boundHolds(configuration: EngineConfiguration) {
        var generator = SplitMix64(seed: 11)
        var engine = Engine(configuration: configuration)
        let convs = ["g", "dm"]
        let users = (0..<10).map { "u\($0)" }
        let names: [String?] = [nil, "Ann", "\u{61C}\u{61C}\u{61C}", "Zoë"]
        for step in 0..<6_000 {
            let conv = Identifier(convs[Int(generator.next() % 2)])
            let user = Identifier(users[Int(generator.next() % UInt64(users.count))])
            let thread: Identifier? = generator.next() % 4 == 0 ? Identifier("t") : nil
            let command: Command
            switch generator.next() % 10 {
            case 0, 1:
                command = .join(
                    conv: conv, user: user, name: names[Int(generator.next() % UInt64(names.count))],
                    locale: generator.next() % 3 == 0 ? "de" : nil)
            case 2, 3, 4, 5:
                let status = generator.next() % 3 != 0
                command = .type(
                    conv: conv, user: user, thread: thread,
                    status: status ? Self.words[Int(generator.next() % UInt64(Self.words.count))] : nil,
                    activity: status ? .status : Activity.phrased[Int(generator.next() % 7)],
                    empty: generator.next() % 8 == 0)
            case 6: command = .send(conv: conv, user: user, thread: thread)
            case 7: command = .open(conv: conv, user: user, thread: thread)
            case 8: command = .user(user: user, name: names[Int(generator.next() % UInt64(names.count))])
            default:
                command = generator.next() % 2 == 0 ? .leave(conv: conv, user: user) : .close(conv: conv, user: user)
            }
            let bound = engine.outputBound(of: command)
            var events: [Event] = []
            engine.apply(Request(command, line: step + 1), to: &events)
            events.removeAll { if case .error = $0 { return true } else { return false } }
            let json = Self.size(events, in: JSONFormat()), text = Self.size(events, in: TextFormat())
            #expect(
                json <= bound && text <= bound,
                "step \(step): \(command) wrote \(json) bytes of JSON, \(text) of text, bound \(bound)")
            if json > bound || text > bound { break }
        }
        engine.checkInvariants()
    }

    @Test("many status typers with the widest 256-byte words: each render stays within its bound")
    func manyWideClauses() {
        for format in ["json", "text"] {
            var engine = Engine(configuration: EngineConfiguration(typingEvents: true))
            var events: [Event] = []
            for index in 0..<30 {
                engine.apply(
                    Request(.join(conv: Identifier("g"), user: Identifier("u\(index)"), name: "\u{61C}\(index)")),
                    to: &events)
            }
            for index in 0..<30 {
                let words = Self.words[index % 6]
                let command = Command.type(
                    conv: Identifier("g"), user: Identifier("u\(index)"), status: words, activity: .status)
                let bound = engine.outputBound(of: command)
                events.removeAll()
                engine.apply(Request(command, at: index), to: &events)
                let written =
                    format == "json" ? Self.size(events, in: JSONFormat()) : Self.size(events, in: TextFormat())
                #expect(written <= bound, "\(format) typer \(index): wrote \(written), bound \(bound)")
                #expect(written > 0)
            }
        }
    }

    @Test("--max-output-per-line refuses a status keystroke whose words would take the room over the cap")
    func capCountsWords() {
        var engine = Engine(configuration: EngineConfiguration(maxOutputPerLine: 6_000))
        var events: [Event] = []
        for index in 0..<5 {
            engine.apply(
                Request(.join(conv: Identifier("g"), user: Identifier("u\(index)"), name: "N\(index)")), to: &events)
        }
        events.removeAll()
        engine.apply(
            Request(
                .type(conv: Identifier("g"), user: Identifier("u0"), status: "is thinking", activity: .status), at: 1),
            to: &events)
        #expect(events.count == 4, "\(events)")
        let wide = Self.words[0]
        #expect(
            engine.outputBound(
                of: .type(conv: Identifier("g"), user: Identifier("u1"), status: wide, activity: .status))
                > engine.outputBound(
                    of: .type(conv: Identifier("g"), user: Identifier("u1"), status: "x", activity: .status)) + 4 * 896)
        for index in 1..<5 {
            events.removeAll()
            engine.apply(
                Request(
                    .type(conv: Identifier("g"), user: Identifier("u\(index)"), status: wide, activity: .status), at: 2),
                to: &events)
        }
        guard case .error(let error)? = events.last else {
            Issue.record("wide status words past the cap were applied: \(events.count) events")
            return
        }
        #expect(error.code == .limit)
    }
}
