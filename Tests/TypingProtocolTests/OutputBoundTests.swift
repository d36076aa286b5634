import Testing
import TypingCore
import TypingProtocol
import TypingTestSupport

/// What one command can make typingd write is bounded, `--max-output-per-line`
/// refuses a command whose bound is over the cap, and the bound is never below what
/// a command actually writes.
@Suite("Output per line")
struct OutputBoundTests {
    /// The bytes `events` take as the protocol's JSON.
    static func encodedSize(_ events: [Event]) -> Int {
        var format = JSONFormat()
        var buffer = OutputBuffer()
        for event in events { format.encode(event, into: &buffer) }
        return buffer.count
    }

    /// A table with long phrases, plural forms and a clause that says the names twice.
    static let book: PhraseBook = {
        let text =
            #"{"locale":"de","plural":{"one":"n = 1"},"names":{"0+1":"Jemand \"anderes\"","0+n":{"one":"{r} Person","other":"{r} Personen, die hier gerade sind"},"1":"{0}","1+1":"{0} und noch jemand","1+n":"{0} und {r} weitere","2":"{0} und {1}","2+1":"{0}, {1} und noch jemand","2+n":"{0}, {1} und {r} weitere","3":"{0}, {1} und {2}"},"verbs":{"typing":{"one":"tippt","other":"tippen alle zusammen gerade etwas"},"recording_audio":"nimmt Audio auf","recording_video":"nimmt ein Video auf","sending_photo":"sendet ein Foto","sending_video":"sendet ein Video","sending_file":"sendet eine Datei","sharing_location":"teilt einen Standort"},"clause":"{names} ({names}) {verb}","separator":" \u2014 ","end":" …"}"#
        let bytes = Array(text.utf8)
        let result: Result<PhraseTable, PhraseTable.Error> = bytes.withUnsafeBytes { raw in
            Result { () throws(PhraseTable.Error) in try PhraseTableFile.decode(raw) }
        }
        guard case .success(let table) = result, let book = try? PhraseBook(tables: [table]) else {
            preconditionFailure("test table: \(result)")
        }
        return book
    }()

    @Test(
        "random commands never write more than their bound",
        arguments: [
            EngineConfiguration(typingEvents: true),
            EngineConfiguration(style: .compact, audience: .open, order: .recent, maxListed: 2),
            EngineConfiguration(typingEvents: true, order: .name, maxListed: 1),
            EngineConfiguration(typingEvents: true, listStyle: .group, phrases: book),
            EngineConfiguration(style: .compact, audience: .open, maxListed: 3, phrases: book),
            EngineConfiguration(
                typingEvents: true, listStyle: .group, phrases: OutputBoundSeveralTests.book, severalAfter: 1)
        ])
    func boundHolds(configuration: EngineConfiguration) {
        var generator = SplitMix64(seed: 7)
        var engine = Engine(configuration: configuration)
        let convs = ["g", "a\u{2028}\"long conversation id \(String(repeating: "x", count: 40))", "dm"]
        let users = (0..<12).map { index in
            index % 4 == 0 ? "user\u{1}\(index)\(String(repeating: "é", count: index * 9))" : "u\(index)"
        }
        // The last is one grapheme cluster of 601 bytes: a rename to it must be
        // bounded by the new name, not the longest name typing there before.
        let names: [String?] = [
            nil, "Ann", "Bö \"the\" Long Name Here", "\u{2028}", "Zoë",
            "x" + String(repeating: "\u{301}", count: 300)
        ]
        for step in 0..<20_000 {
            let conv = Identifier(convs[Int(generator.next() % 3)])
            let user = Identifier(users[Int(generator.next() % UInt64(users.count))])
            let command: Command
            let threads: [Identifier?] = [
                nil, nil, Identifier("t"), Identifier("a long thread id \u{2028} \(String(repeating: "y", count: 60))")
            ]
            let thread = threads[Int(generator.next() % 4)]
            let locales: [String?] = [nil, "de", "en", "de-AT"]
            switch generator.next() % 12 {
            case 0, 1:
                command = .join(
                    conv: conv, user: user, name: names[Int(generator.next() % UInt64(names.count))],
                    sendTyping: generator.next() % 7 == 0 ? false : nil,
                    locale: locales[Int(generator.next() % 4)],
                    receiveTyping: generator.next() % 9 == 0 ? generator.next() % 2 == 0 : nil)
            case 2, 3, 4:
                command = .type(
                    conv: conv, user: user, thread: thread,
                    activity: Activity.allCases[Int(generator.next() % 14) % 7 * Int(generator.next() % 2)],
                    empty: generator.next() % 6 == 0)
            case 5: command = .send(conv: conv, user: user, thread: thread)
            case 6:
                command = .open(conv: conv, user: user, thread: thread, view: generator.next() % 4 == 0 ? .list : .chat)
            case 7: command = generator.next() % 3 == 0 ? .offline(user: user) : .close(conv: conv, user: user)
            case 8:
                command = .user(
                    user: user, name: names[Int(generator.next() % UInt64(names.count))],
                    sendTyping: generator.next() % 2 == 0,
                    locale: locales[Int(generator.next() % 4)],
                    receiveTyping: generator.next() % 3 == 0 ? generator.next() % 2 == 0 : nil)
            case 9: command = .open(conv: conv, user: user, thread: nil, view: .list)
            default:
                command =
                    generator.next() % 2 == 0
                    ? .leave(conv: conv, user: user) : .remove(conv: conv, user: user, by: nil)
            }
            let bound = engine.outputBound(of: command)
            var events: [Event] = []
            engine.apply(Request(command, line: step + 1), to: &events)
            let written = Self.encodedSize(events.filter { if case .error = $0 { return false } else { return true } })
            #expect(written <= bound, "step \(step): \(command) wrote \(written) bytes, bound \(bound)")
            if written > bound { break }
        }
    }

    @Test("a rename of someone typing is bounded by the new name: a long one over the cap is refused")
    func renameBound() {
        var engine = Engine(configuration: EngineConfiguration(maxOutputPerLine: 4000))
        var events: [Event] = []
        for viewer in "bcdefghijk" {
            engine.apply(Request(.join(conv: Identifier("g"), user: Identifier(String(viewer)))), to: &events)
        }
        engine.apply(Request(.join(conv: Identifier("g"), user: Identifier("a"), name: "A")), to: &events)
        engine.apply(Request(.type(conv: Identifier("g"), user: Identifier("a"))), to: &events)
        let long = "x" + String(repeating: "\u{301}", count: 500)
        for command in [
            Command.user(user: Identifier("a"), name: long),
            .join(conv: Identifier("g"), user: Identifier("a"), name: long)
        ] {
            let bound = engine.outputBound(of: command)
            var written: [Event] = []
            var copy = engine
            copy.apply(Request(command, line: 1), to: &written)
            #expect(
                Self.encodedSize(written) <= bound, "\(command): wrote \(Self.encodedSize(written)), bound \(bound)")
            written = []
            engine.apply(Request(command, line: 1), to: &written)
            guard case .error(let error)? = written.first else {
                Issue.record("\(command) was applied past the cap: \(Self.encodedSize(written)) bytes"); continue
            }
            #expect(error.code == .limit)
        }
    }

    @Test("a command whose bound is over --max-output-per-line gets limit and changes nothing")
    func capRefuses() {
        var engine = Engine(configuration: EngineConfiguration(maxOutputPerLine: 200_000))
        var events: [Event] = []
        let long = String(repeating: "x", count: 250)
        for index in 0..<60 {
            engine.apply(
                Request(.join(conv: Identifier("big"), user: Identifier("\(index)\(long)"), name: "N\(index)")),
                to: &events)
        }
        var refused = 0
        for index in 0..<60 {
            events.removeAll()
            engine.apply(
                Request(.type(conv: Identifier("big"), user: Identifier("\(index)\(long)")), at: index), to: &events)
            if case .error(let error) = events.last, error.code == .limit {
                refused += 1
                #expect(events.count == 1, "a refused command writes its error only")
                #expect(error.message.contains("--max-output-per-line 200000"))
            }
        }
        #expect(refused > 0 && refused < 60, "the first keystrokes fit, later ones do not: \(refused) refused")
        #expect(engine.typingCount == 60 - refused)
        engine.checkInvariants()
    }
}
