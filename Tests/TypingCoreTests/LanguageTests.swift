import Testing
import TypingCore

/// Protocol v3 in the engine, rule by rule: languages, not seeing typing, threads
/// and what a render of one costs, activities beyond `--max-listed`.
@Suite("Protocol v3 in the engine")
struct LanguageTests {
    static let book = RandomWorkloadTests.book

    @Test("a change of locale re-renders the user's conversations in the order they joined them; a re-join counts from its own time")
    func localeVisitsInJoinOrder() {
        var h = Harness(EngineConfiguration(phrases: Self.book))
        for conv in ["a", "b", "c"] {
            h.run(.join(conv: ID(conv), user: ID("viv"), name: "Viv"))
            h.run(.join(conv: ID(conv), user: ID("tom"), name: "Tom"))
        }
        h.run(.leave(conv: ID("a"), user: ID("viv")), at: 1)
        h.run(.join(conv: ID("a"), user: ID("viv")), at: 2)
        h.type("c", "tom", at: 10)
        h.type("a", "tom", at: 11)
        h.type("b", "tom", at: 12)
        // Without a locale, Viv reads the default locale's table (de-CH: de).
        #expect(h.run(.user(user: ID("viv"), locale: "xx-YY"), at: 20) == [
            "@20 b viv: [tom] TYPING: <Tom>", "@20 c viv: [tom] TYPING: <Tom>", "@20 a viv: [tom] TYPING: <Tom>",
        ])
        #expect(h.run(.user(user: ID("viv"), locale: "XX-yy"), at: 21).isEmpty, "the same tag, ignoring case: no change")
        #expect(h.run(.user(user: ID("viv"), locale: "fr"), at: 22) == [
            "@22 b viv: [tom] Tom tut typing …", "@22 c viv: [tom] Tom tut typing …", "@22 a viv: [tom] Tom tut typing …",
        ], "fr has no table: the default locale's")
    }

    @Test("tags choose tables by dropping subtags, then the default locale, then English; English can be replaced")
    func localeChoice() throws {
        let pt = try PhraseTable(locale: "PT", names: PhraseTable.english.names, verbs: PhraseTable.english.verbs,
                                 clause: "{names} {verb}", separator: "; ", end: " (pt)")
        let en = try PhraseTable(locale: "en", names: PhraseTable.english.names, verbs: PhraseTable.english.verbs,
                                 clause: "{names} {verb}", separator: "; ", end: "…")
        let book = try PhraseBook(tables: [pt], defaultLocale: "pt-BR-x")
        #expect(book.table(for: "pt-BR-x-y") == 1 && book.table(for: "Pt") == 1)
        #expect(book.table(for: nil) == 1, "the default locale pt-BR-x chooses pt")
        #expect(book.table(for: "zz") == 1, "an unknown tag gets the default locale's table")
        #expect(try PhraseBook(tables: [pt], defaultLocale: "zz").table(for: "ja") == 0, "then English")
        let replaced = try PhraseBook(tables: [en])
        #expect(replaced.tables.count == 1 && replaced.tables[0].end == "…")
        #expect(throws: PhraseBook.Error.self) { try PhraseBook(defaultLocale: "de_DE") }
    }

    @Test("receive_typing false: no indicators, what was sent is forgotten; true again: compared from the empty indicator")
    func notSeeingTyping() {
        var h = Harness()
        h.join("g", "ann", "bob")
        h.type("g", "bob", at: 1)
        #expect(h.run(.user(user: ID("ann"), receiveTyping: false), at: 2).isEmpty)
        #expect(h.engine.conversations[h.engine.findConversation(ID("g"))!].members[0].lastSent === IndicatorView.empty)
        #expect(h.run(.send(conv: ID("g"), user: ID("bob")), at: 3).isEmpty)
        h.type("g", "bob", at: 4)
        #expect(h.run(.user(user: ID("ann"), receiveTyping: true), at: 5) == ["@5 g ann: [bob] Bob is typing..."])
        #expect(h.run(.user(user: ID("ann"), receiveTyping: true), at: 6).isEmpty, "no change, no visit")
    }

    @Test("a keystroke in a thread of a 10,000-member room compares the thread's viewers, not the room",
          .enabled(if: Engine.hasInvariantChecker, "viewers compared are counted only in builds with the checker"))
    func threadCostFollowsItsViewers() {
        #if TYPINGD_INTERNAL_CHECKS
        var h = Harness(checksEveryStep: false)
        for index in 0..<10_000 { h.run(.join(conv: ID("big"), user: ID("u\(index)"))) }
        for index in [10, 5000, 9999] { h.run(.open(conv: ID("big"), user: ID("u\(index)"), thread: ID("t"))) }
        let before = h.engine.viewersCompared
        #expect(h.run(.type(conv: ID("big"), user: ID("u1"), thread: ID("t")), at: 5).count == 3)
        #expect(h.run(.type(conv: ID("big"), user: ID("u2"), thread: ID("t")), at: 6).count == 3)
        #expect(h.run(.send(conv: ID("big"), user: ID("u1"), thread: ID("t")), at: 7).count == 3)
        #expect(h.engine.viewersCompared - before <= 9, "\(h.engine.viewersCompared - before) viewers compared")
        h.engine.checkInvariants()
        #endif
    }

    @Test("activities come only for the typers listed; the phrase counts every typer")
    func activitiesBeyondTheList() {
        var h = Harness(EngineConfiguration(maxListed: 2))
        h.join("g", "a", "b", "c", "d")
        h.type("g", "a", at: 1)
        h.type("g", "b", at: 2)
        #expect(h.run(.type(conv: ID("g"), user: ID("c"), activity: .sendingFile), at: 3) == [
            "@3 g a: [b,c] {typing,sending_file} B is typing; C is sending a file...",
            "@3 g b: [a,c] {typing,sending_file} A is typing; C is sending a file...",
            "@3 g d: [a,b] more 1 A and B are typing; C is sending a file...",
        ])
    }

    @Test("a location keeps activity groups while someone there does something else, and drops them when it is quiet")
    func groupsComeAndGo() {
        var h = Harness()
        h.join("g", "a", "b", "c")
        h.type("g", "a", at: 1)
        let c = h.engine.findConversation(ID("g"))!
        #expect(h.engine.conversations[c].main.groups == nil)
        h.run(.type(conv: ID("g"), user: ID("b"), activity: .recordingAudio), at: 2)
        #expect(h.engine.conversations[c].main.groups != nil)
        h.run(.type(conv: ID("g"), user: ID("b")), at: 3)
        #expect(h.engine.conversations[c].main.groups != nil, "kept until the location is quiet")
        h.run(.send(conv: ID("g"), user: ID("a")), at: 4)
        h.run(.send(conv: ID("g"), user: ID("b")), at: 5)
        #expect(h.engine.conversations[c].main.groups == nil)
    }

    @Test("a thread nobody types in or looks at is forgotten")
    func threadsAreForgotten() {
        var h = Harness()
        h.join("g", "a", "b")
        h.run(.open(conv: ID("g"), user: ID("a"), thread: ID("t1")), at: 1)
        h.run(.type(conv: ID("g"), user: ID("b"), thread: ID("t2")), at: 2)
        let c = h.engine.findConversation(ID("g"))!
        #expect(h.engine.conversations[c].threads.count == 2)
        h.run(.type(conv: ID("g"), user: ID("b"), thread: ID("t1")), at: 3)
        #expect(h.engine.conversations[c].threads.count == 1, "t2 went with its last typer")
        h.run(.close(conv: ID("g"), user: ID("a")), at: 4)
        h.run(.send(conv: ID("g"), user: ID("b"), thread: ID("t1")), at: 5)
        #expect(h.engine.conversations[c].threads.count == 0)
    }
}
