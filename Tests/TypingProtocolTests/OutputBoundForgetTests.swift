import Testing
import TypingCore
import TypingProtocol
import TypingTestSupport

/// The output bound (Protocol.md#bounded-output) when every command naming a
/// conversation renders it (Protocol.md#who-sees-what), so forgotten screens (left by
/// `offline`, `close` from a thread or the list, `forget`) are told by commands that
/// change nothing else; the bound of every command must count them. Time moves, so
/// timeouts fire too (before the bound is taken: they are steps of their own, not the
/// command's output).
@Suite("Output per line, with forgotten screens")
struct OutputBoundForgetTests {
    static let configurations = [
        EngineConfiguration(typingEvents: true),
        EngineConfiguration(style: .compact, typingEvents: true, audience: .open, order: .recent, maxListed: 2),
        EngineConfiguration(order: .name, maxListed: 1, listStyle: .group, phrases: OutputBoundTests.book),
        // Rooms cross --quiet-above both ways: the sweep to empty and the render of
        // every screen back.
        EngineConfiguration(typingEvents: true, quietAbove: 4)
    ]

    @Test(
        "random v3 commands with forget, offline and moving time never write more than their bound",
        arguments: OutputBoundForgetTests.configurations.indices)
    func boundHolds(configuration index: Int) {
        let configuration = Self.configurations[index]
        var generator = SplitMix64(seed: 11)
        func below(_ bound: Int) -> Int { Int(generator.next() % UInt64(bound)) }
        var engine = Engine(configuration: configuration)
        let names: [String?] = [
            nil, "Ann", String(repeating: "\"", count: 15), "x" + String(repeating: "\u{301}", count: 400)
        ]
        let threads: [Identifier?] = [nil, Identifier("t"), Identifier("a long thread \u{2028} id")]
        var time = 0
        for step in 0..<15_000 {
            let conv = Identifier(["g", "h\u{2028}\"", "dm"][below(3)])
            let user = Identifier(
                below(5) == 0 ? "user\u{1}\(below(9))\(String(repeating: "é", count: 40))" : "u\(below(9))")
            let thread = threads[below(3)]
            let command: Command
            switch below(16) {
            case 0, 1:
                command = .join(
                    conv: conv, user: user, name: names[below(names.count)], locale: below(3) == 0 ? "de" : nil,
                    receiveTyping: below(8) == 0 ? below(2) == 0 : nil)
            case 2, 3, 4, 5:
                command = .type(
                    conv: conv, user: user, thread: thread, timeout: below(3) == 0 ? 1 + below(900) : nil,
                    activity: Activity.allCases[below(2) * below(7)], empty: below(8) == 0)
            case 6: command = .send(conv: conv, user: user, thread: thread)
            case 7:
                if let thread, below(3) == 0 {
                    command = .open(conv: conv, user: user, thread: thread, pane: .side)
                } else {
                    command = .open(conv: conv, user: user, thread: thread, view: below(3) == 0 ? .list : .chat)
                }
            case 8: command = .close(conv: conv, user: user, pane: below(3) == 0 ? .side : .main)
            case 9: command = .offline(user: user)
            case 10, 11: command = .forget(conv: conv, user: user)
            case 12:
                command = .user(
                    user: user, name: names[below(names.count)], receiveTyping: below(3) == 0 ? below(2) == 0 : nil)
            case 13: command = .leave(conv: conv, user: user)
            default: command = .remove(conv: conv, user: user, by: nil)
            }
            time += below(300)
            var events: [Event] = []
            // The timeouts due by now fire first, as steps of their own.
            engine.apply(Request(.tick, at: time, line: 0), to: &events)
            let bound = engine.outputBound(of: command)
            events = []
            engine.apply(Request(command, line: step + 1), to: &events)
            let written = OutputBoundTests.encodedSize(
                events.filter { if case .error = $0 { return false } else { return true } })
            #expect(written <= bound, "step \(step): \(command) wrote \(written) bytes, bound \(bound)")
            if written > bound { break }
        }
        engine.checkInvariants()
    }

    @Test("a command that tells many forgotten screens is bounded by an indicator for each of them")
    func manyForgotten() {
        var engine = Engine(configuration: EngineConfiguration())
        let conv = Identifier("room")
        var events: [Event] = []
        engine.apply(Request(.join(conv: conv, user: Identifier("ana"))), to: &events)
        engine.apply(Request(.join(conv: conv, user: Identifier("ben"), name: "Ben")), to: &events)
        let members = (0..<50).map { Identifier("m\($0)") }
        for member in members { engine.apply(Request(.join(conv: conv, user: member)), to: &events) }
        engine.apply(Request(.type(conv: conv, user: Identifier("ben")), at: 10), to: &events)
        for member in members { engine.apply(Request(.forget(conv: conv, user: member), at: 20), to: &events) }
        // ana's send changes nothing but the 50 forgotten screens, each told at once.
        let command = Command.send(conv: conv, user: Identifier("ana"))
        let bound = engine.outputBound(of: command)
        events = []
        engine.apply(Request(command, at: 30, line: 104), to: &events)
        #expect(events.count == members.count)
        let (json, text) = TextOutputBoundTests.sizes(events)
        #expect(json <= bound && text <= bound, "json: \(json) bytes, text: \(text), bound \(bound)")
        engine.checkInvariants()
    }
}

/// `--max-output-per-line` with `--format text`. The bound counts bytes as the
/// wider of the two formats writes them: text escapes characters JSON writes as they
/// are, U+061C, the Arabic letter mark (2 bytes, `\u{61c}` in text: 7), and the
/// other bidirectional controls (3 bytes, `\u{200e}`: 8). An id of 128 of them is
/// 256 bytes in JSON and 896 in text; a name of 15 of them 30 and 105.
@Suite("Output per line, as text")
struct TextOutputBoundTests {
    /// What `events` take in JSON and in text.
    static func sizes(_ events: [Event]) -> (json: Int, text: Int) {
        var format = TextFormat()
        var buffer = OutputBuffer()
        for event in events { format.encode(event, into: &buffer) }
        return (OutputBoundTests.encodedSize(events), buffer.count)
    }

    @Test(
        "a command never writes more text than its bound",
        arguments: ["\u{61C}", "\u{200E}", "\u{2028}", "\u{202E}", "\"", "\u{9F}"])
    func bidirectionalControls(_ mark: String) {
        var engine = Engine(configuration: EngineConfiguration())
        let conv = Identifier(String(repeating: mark, count: 128 / mark.utf8.count * 2))
        let viewer = Identifier(String(repeating: mark, count: 127 / mark.utf8.count) + "v")
        let typer = Identifier(String(repeating: mark, count: 127 / mark.utf8.count) + "t")
        let name = String(repeating: mark + "a", count: 7) + mark
        var events: [Event] = []
        engine.apply(Request(.join(conv: conv, user: viewer)), to: &events)
        engine.apply(Request(.join(conv: conv, user: typer, name: name, receiveTyping: false)), to: &events)
        for command in [Command.type(conv: conv, user: typer), .send(conv: conv, user: typer)] {
            let bound = engine.outputBound(of: command)
            events = []
            engine.apply(Request(command, at: 5, line: 3), to: &events)
            #expect(!events.isEmpty)
            let (json, text) = Self.sizes(events)
            #expect(json <= bound, "json: \(json) bytes, bound \(bound)")
            #expect(text <= bound, "text: \(text) bytes, bound \(bound)")
        }
        engine.checkInvariants()
    }

    /// A table whose phrases are mostly names: the first of three said twice, in a
    /// clause that says the names twice (within the 128 KiB a phrase may take).
    static let namesBook: PhraseBook = {
        let names =
            #""0+1":"x","0+n":"{r}","1":"{0}{0}{0}","1+1":"{0}","1+n":"{0}{r}","2":"{0}{1}","2+1":"{0}{1}","2+n":"{0}{1}{r}","3":"{0}{0}{1}{2}""#
        let verbs =
            #""typing":"t","recording_audio":"a","recording_video":"b","sending_photo":"c","sending_video":"d","sending_file":"e","sharing_location":"f""#
        let text =
            #"{"locale":"xx","names":{"# + names + #"},"verbs":{"# + verbs
            + #"},"clause":"{names}{names}{verb}","separator":";","end":"."}"#
        let result: Result<PhraseTable, PhraseTable.Error> = Array(text.utf8).withUnsafeBytes { raw in
            Result { () throws(PhraseTable.Error) in try PhraseTableFile.decode(raw) }
        }
        guard case .success(let table) = result, let book = try? PhraseBook(tables: [table]) else {
            preconditionFailure("test table: \(result)")
        }
        return book
    }()

    @Test(
        "names of bidirectional controls, under plain ids: the text stays in its bound",
        arguments: ["\u{61C}", "\u{200E}", "\u{202E}"])
    func names(_ mark: String) {
        var engine = Engine(configuration: EngineConfiguration(maxListed: 3, phrases: Self.namesBook))
        let conv = Identifier("c")
        var events: [Event] = []
        engine.apply(Request(.join(conv: conv, user: Identifier("v"), locale: "xx")), to: &events)
        let typers = (0..<3).map { Identifier("t\($0)") }
        for typer in typers {
            engine.apply(
                Request(
                    .join(
                        conv: conv, user: typer, name: String(repeating: mark, count: 15),
                        receiveTyping: false)), to: &events)
        }
        for (index, typer) in typers.enumerated() {
            let command = Command.type(conv: conv, user: typer)
            let bound = engine.outputBound(of: command)
            events = []
            engine.apply(Request(command, at: index, line: 3), to: &events)
            let (json, text) = Self.sizes(events)

            #expect(json <= bound, "json: \(json) bytes, bound \(bound)")
            #expect(text <= bound, "text: \(text) bytes, bound \(bound)")
        }
    }
}

/// `--max-output-per-line` and what a command writes besides renders: its `ok`
/// counts; a command that stops no streak is not charged for one.
@Suite("Output per line, replies and stops")
struct OutputBoundReplyTests {
    static func events(_ engine: inout Engine, _ request: Request) -> [Event] {
        var events: [Event] = []
        engine.apply(request, to: &events)
        return events
    }

    static func isLimit(_ events: [Event]) -> Bool {
        guard events.count == 1, case .error(let error) = events[0] else { return false }
        return error.code == .limit
    }

    @Test("an ok with a long id counts against the cap, in both formats", arguments: [100, 2_000])
    func okCounts(cap: Int) {
        var engine = Engine(configuration: EngineConfiguration(maxOutputPerLine: cap))
        let id = Request.ID.string(String(repeating: "\u{1}", count: 128) + String(repeating: "\u{61C}", count: 64))
        for command in [
            Command.join(conv: Identifier("g"), user: Identifier("a")), .tick,
            .forget(conv: Identifier("g"), user: Identifier("a"))
        ] {
            let events = Self.events(&engine, Request(command, id: id, line: 1))
            let (json, text) = TextOutputBoundTests.sizes(events)
            if !Self.isLimit(events) {
                #expect(json <= cap && text <= cap, "\(command): json \(json), text \(text), cap \(cap)")
            }
        }
        // Under a cap of 100, the join's ok (over 700 bytes) is refused; under 2,000 it fits.
        #expect(
            Self.isLimit(
                Self.events(&engine, Request(.join(conv: Identifier("h"), user: Identifier("b")), id: id, line: 2)))
                == (cap == 100))
    }

    @Test("open where one types, and send in another thread, stop nothing and are not charged a render")
    func noStopNoCharge() {
        var engine = Engine(configuration: EngineConfiguration())
        let g = Identifier("g")
        for index in 0..<30 {
            _ = Self.events(
                &engine, Request(.join(conv: g, user: Identifier("user\(index)"), name: "User \(index)"), at: 0))
        }
        for index in 0..<2 {
            #expect(!Self.events(&engine, Request(.type(conv: g, user: Identifier("user\(index)")), at: 1)).isEmpty)
        }
        let typer = Identifier("user0"), idle = Identifier("user29")
        let stop = engine.outputBound(of: .send(conv: g, user: typer))
        #expect(
            engine.outputBound(of: .open(conv: g, user: typer)) == engine.outputBound(of: .open(conv: g, user: idle)),
            "opening the chat where one types is charged as anyone's open")
        #expect(engine.outputBound(of: .open(conv: g, user: typer)) * 10 < stop)
        #expect(
            engine.outputBound(of: .send(conv: g, user: typer, thread: Identifier("t"))) == 0,
            "a message in a thread stops no streak on the main timeline")
        #expect(
            engine.outputBound(of: .open(conv: g, user: typer, thread: Identifier("t"))) >= stop,
            "opening a thread stops the streak on the main timeline")
        #expect(Self.events(&engine, Request(.open(conv: g, user: typer), at: 3)).isEmpty)
        #expect(Self.events(&engine, Request(.send(conv: g, user: typer, thread: Identifier("t")), at: 4)).isEmpty)
        #expect(Self.events(&engine, Request(.send(conv: g, user: typer), at: 5)).count == 29)
    }
}
