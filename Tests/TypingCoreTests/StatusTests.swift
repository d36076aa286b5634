import Testing
import TypingCore

/// Status in one's own words (Protocol.md#status-in-ones-own-words): a status typer
/// is a clause of their own whose verb is their words, shown as given.
@Suite("Status words")
struct StatusTests {
    /// A keystroke with the status activity and `words`.
    static func status(
        _ conv: String, _ user: String, _ words: String, thread: String? = nil,
        timeout: Int? = nil
    ) -> Command {
        .type(
            conv: ID(conv), user: ID(user), thread: thread.map(ID), status: words, timeout: timeout, activity: .status)
    }

    @Test("status typers never group: a clause each, in the order of their first typer, among the other activities")
    func clausesAmongActivities() {
        var h = Harness(EngineConfiguration(typingEvents: true))
        h.join("g", "ana", "bot", "ben", "cy", "dee")
        h.run(.type(conv: ID("g"), user: ID("ana")), at: 1)
        #expect(
            h.run(Self.status("g", "bot", "is thinking"), at: 2) == [
                "@2 g bot started status \"is thinking\"",
                "@2 g ana: [bot] {status} Bot is thinking...",
                "@2 g ben: [ana,bot] {typing,status} Ana is typing; Bot is thinking...",
                "@2 g cy: [ana,bot] {typing,status} Ana is typing; Bot is thinking...",
                "@2 g dee: [ana,bot] {typing,status} Ana is typing; Bot is thinking..."
            ])
        // The same words as Bot's: still a clause of its own.
        h.run(Self.status("g", "ben", "is thinking"), at: 3)
        h.run(.type(conv: ID("g"), user: ID("cy"), activity: .recordingAudio), at: 4)
        #expect(
            h.run(.type(conv: ID("g"), user: ID("dee")), at: 5).last
                == "@5 g cy: [ana,bot,ben,dee] {typing,status,status,typing} Ana and Dee are typing; Bot is thinking; Ben is thinking..."
        )
        let c = h.engine.findConversation(ID("g"))!
        #expect(h.engine.conversations[c].main.groups != nil)
        #expect(
            h.run(.query(conv: ID("g"))) == [
                "state g members=[\"ana\", \"bot\", \"ben\", \"cy\", \"dee\"] typing=[\"ana\", \"bot\", \"ben\", \"cy\", \"dee\"] activities=[\"typing\", \"status\", \"status\", \"recording_audio\", \"typing\"]"
            ])
    }

    @Test("an unnamed status typer is the table's one-typer subject; a named one their display name")
    func unnamedSubject() {
        var h = Harness()
        h.join("g", "ana")
        h.run(.join(conv: ID("g"), user: ID("helper")))
        #expect(
            h.run(Self.status("g", "helper", "is thinking"), at: 1) == [
                "@1 g ana: [helper] {status} Someone is thinking..."
            ])
        h.run(.join(conv: ID("g"), user: ID("zed"), name: "A very long display name indeed"))
        #expect(
            h.run(Self.status("g", "zed", "is here"), at: 2).first
                == "@2 g ana: [zed,helper] {status,status} A very long dis... is here; Someone is thinking...")
    }

    @Test("a keystroke that changes the words, or the activity to or from status, is a change; the same words are not")
    func changes() {
        var h = Harness(EngineConfiguration(typingEvents: true))
        h.join("g", "ana", "bot")
        h.run(Self.status("g", "bot", "is thinking"), at: 1)
        #expect(h.run(Self.status("g", "bot", "is thinking"), at: 2) == [])
        #expect(
            h.run(Self.status("g", "bot", "is searching"), at: 3) == [
                "@3 g bot changed status \"is searching\"",
                "@3 g ana: [bot] {status} Bot is searching..."
            ])
        #expect(
            h.run(.type(conv: ID("g"), user: ID("bot")), at: 4) == [
                "@4 g bot changed typing",
                "@4 g ana: [bot] Bot is typing..."
            ])
        #expect(
            h.run(Self.status("g", "bot", "is searching"), at: 5) == [
                "@5 g bot changed status \"is searching\"",
                "@5 g ana: [bot] {status} Bot is searching..."
            ])
        // Canonically equal, other bytes: a change.
        h.run(Self.status("g", "bot", "Zoë"), at: 6)
        #expect(
            h.run(Self.status("g", "bot", "Zoe\u{308}"), at: 7) == [
                "@7 g bot changed status \"Zoe\u{308}\"",
                "@7 g ana: [bot] {status} Bot Zoe\u{308}..."
            ])
        #expect(
            h.run(.type(conv: ID("g"), user: ID("bot"), activity: .sendingFile), at: 8) == [
                "@8 g bot changed sending_file",
                "@8 g ana: [bot] {sending_file} Bot is sending a file..."
            ])
        #expect(h.engine.statusWords.count == 0)
    }

    @Test("a status streak times out, stops on send and on an empty box, and moves with its words")
    func stops() {
        var h = Harness(EngineConfiguration(typingEvents: true))
        h.join("g", "ana", "bot")
        h.run(Self.status("g", "bot", "is thinking", timeout: 50), at: 0)
        #expect(
            h.run(.tick, at: 50) == [
                "@50 g bot stopped timeout",
                "@50 g ana: [] "
            ])
        h.run(Self.status("g", "bot", "is thinking"), at: 60)
        #expect(h.run(.send(conv: ID("g"), user: ID("bot")), at: 70) == ["@70 g bot stopped send", "@70 g ana: [] "])
        h.run(Self.status("g", "bot", "is thinking"), at: 80)
        #expect(
            h.run(.type(conv: ID("g"), user: ID("bot"), status: "x", activity: .status, empty: true), at: 90)
                == ["@90 g bot stopped empty", "@90 g ana: [] "])
        h.run(.open(conv: ID("g"), user: ID("ana"), thread: ID("t")), at: 95)
        h.run(Self.status("g", "bot", "is thinking"), at: 100)
        #expect(
            h.run(Self.status("g", "bot", "is writing code", thread: "t"), at: 110) == [
                "@110 g bot stopped moved",
                "@110 g#t bot started status \"is writing code\"",
                "@110 g#t ana: [bot] {status} Bot is writing code..."
            ])
        #expect(h.engine.statusWords.count == 1)
        h.run(.offline(user: ID("bot")), at: 120)
        #expect(h.engine.statusWords.count == 0)
    }

    @Test("words are shown as given: placeholders, bidirectional marks and joiners are not touched")
    func naughtyWords() {
        for words in [
            "is searching {0} the web", "{verb}", "{names} {r}", "is \u{202E}gnikniht", "\u{61C}\u{200F}x\u{200E}",
            "👩\u{200D}💻 is coding", "is \"quoted\" \\ here", "é"
        ] {
            var h = Harness()
            h.join("g", "ana", "bot", "ben")
            h.run(Self.status("g", "bot", words), at: 1)
            #expect(
                h.run(.type(conv: ID("g"), user: ID("ben")), at: 2).first
                    == "@2 g ana: [bot,ben] {status,typing} Bot \(words); Ben is typing...", "\(words)")
        }
    }

    @Test("the typer does not see their own clause; the others see it in their own table, the words unchanged")
    func ownViewAndTables() throws {
        let de = try PhraseTable(
            locale: "de", plural: PluralRules([.one: "i = 1 and v = 0"]),
            names: [
                "0+1": .plain("Jemand"), "0+n": .plain("{r} Personen"), "1": .plain("{0}"),
                "1+1": .plain("{0} und noch jemand"), "1+n": .plain("{0} und {r} weitere"),
                "2": .plain("{0} und {1}"), "2+1": .plain("{0}, {1} und noch jemand"),
                "2+n": .plain("{0}, {1} und {r} weitere"), "3": .plain("{0}, {1} und {2}")
            ],
            verbs: Dictionary(uniqueKeysWithValues: Activity.phrased.map { ($0, PhraseTable.Text.plain("tippt")) }),
            clause: "{names}: {verb}", separator: " / ", end: " …")
        var h = Harness(EngineConfiguration(phrases: try PhraseBook(tables: [de], defaultLocale: "en")))
        h.run(.join(conv: ID("g"), user: ID("ana"), name: "Ana", locale: "de"))
        h.join("g", "bot", "ben")
        h.run(.join(conv: ID("g"), user: ID("cy")))
        h.run(Self.status("g", "bot", "is thinking"), at: 1)
        h.run(Self.status("g", "cy", "is thinking"), at: 2)
        #expect(
            h.run(.type(conv: ID("g"), user: ID("ben")), at: 3) == [
                "@3 g ana: [bot,ben,cy] {status,typing,status} Bot: is thinking / Ben: tippt / Jemand: is thinking …",
                "@3 g bot: [ben,cy] {typing,status} Ben is typing; Someone is thinking...",
                "@3 g cy: [bot,ben] {status,typing} Bot is thinking; Ben is typing..."
            ])
    }

    @Test("a phrase table with a verb for status is refused")
    func noStatusVerb() {
        var verbs = PhraseTable.english.verbs
        verbs[.status] = .plain("is doing something")
        #expect(throws: PhraseTable.Error.self) {
            try PhraseTable(
                locale: "xx", plural: PhraseTable.english.plural, names: PhraseTable.english.names,
                verbs: verbs, clause: "{names} {verb}", separator: "; ", end: "...")
        }
        #expect(Activity.phrased.count == 7 && !Activity.phrased.contains(.status))
        #expect(Activity.allCases.count == 8 && Activity(name: "status") == .status)
    }

    @Test("a snapshot lists a status streak with its words")
    func snapshot() {
        var h = Harness()
        h.join("g", "ana", "bot")
        h.run(Self.status("g", "bot", "is {0} thinking", timeout: 500), at: 10)
        #expect(
            h.run(.snapshot, at: 20).filter { $0.hasPrefix("streak") }
                == ["streak g bot status \"is {0} thinking\" deadline=510 keystroke=1"])
    }
}
