import Testing
import TypingCore

/// `--several-after K`: a clause of more than K typers names nobody and is phrased
/// with its table's `several` subject (or `0+n` with r = n without one); the ids an
/// indicator lists do not change (Protocol.md#several-people).
@Suite("Several people")
struct SeveralPeopleTests {
    /// A table like English whose `several` has a form for few (3–4) and one for the rest,
    /// and whose verbs show the category they were chosen by.
    static let qq: PhraseTable = {
        var names = PhraseTable.english.names
        names[PhraseTable.severalKey] = .plural([.few: "a few ({r})", .other: "many ({r})"])
        do {
            return try PhraseTable(
                locale: "qq", plural: PluralRules([.one: "n = 1", .few: "n = 3..4"]), names: names,
                verbs: Dictionary(
                    uniqueKeysWithValues: Activity.phrased.map {
                        (
                            $0,
                            PhraseTable.Text.plural([
                                .one: "\($0.name):one", .few: "\($0.name):few", .other: "\($0.name):other"
                            ])
                        )
                    }),
                clause: "{names} {verb}", separator: " / ", end: ".")
        } catch {
            preconditionFailure("test table: \(error)")
        }
    }()

    /// English without `several`: its `0+n` serves.
    static let plain: PhraseTable = {
        var names = PhraseTable.english.names
        names[PhraseTable.severalKey] = nil
        names["0+n"] = .plural([.one: "{r} person", .other: "{r} persons"])
        do {
            return try PhraseTable(
                locale: "pl-x", plural: PhraseTable.english.plural, names: names,
                verbs: PhraseTable.english.verbs, clause: "{names} {verb}", separator: "; ", end: "...")
        } catch {
            preconditionFailure("test table: \(error)")
        }
    }()

    static let book: PhraseBook = {
        do {
            return try PhraseBook(tables: [qq, plain])
        } catch {
            preconditionFailure("test book: \(error)")
        }
    }()

    /// One clause of `count` typers named A, B, C, … with `several` set or not.
    static func clause(_ table: PhraseTable, count: Int, several: Bool, activity: Activity = .typing) -> String {
        var bytes: [UInt8] = []
        table.appendClause(
            count: count, shown: several ? 0 : min(count, 2), activity: activity,
            names: .init(["A", "B", "C"]), several: several, into: &bytes)
        table.appendEnd(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("the built-in English table has several = \"Several people\", with the verb for n")
    func english() {
        #expect(PhraseTable.english.names[PhraseTable.severalKey] == .plain("Several people"))
        #expect(Self.clause(.english, count: 4, several: true) == "Several people are typing...")
        #expect(
            Self.clause(.english, count: 9, several: true, activity: .sendingPhoto)
                == "Several people are sending photos...")
        #expect(Self.clause(.english, count: 4, several: false) == "A, B, and 2 others are typing...")
    }

    @Test(
        "a plural several is chosen by n's category, {r} is n, and the verb is n's",
        arguments: [
            (3, "a few (3) typing:few."), (4, "a few (4) typing:few."), (5, "many (5) typing:other."),
            (2, "many (2) typing:other."), (1234, "many (1234) typing:other.")
        ])
    func pluralSeveral(count: Int, expected: String) {
        #expect(Self.clause(Self.qq, count: count, several: true) == expected)
    }

    @Test("a table without several phrases the clause with its 0+n, r = n")
    func fallback() {
        #expect(Self.plain.names[PhraseTable.severalKey] == nil)
        #expect(Self.clause(Self.plain, count: 4, several: true) == "4 persons are typing...")
        #expect(Self.clause(Self.plain, count: 3, several: false) == "A, B, and someone else are typing...")
    }

    /// Four named typers (a, b, c, d) and a viewer v who does not type, in `g`.
    static func fourTypers(_ configuration: EngineConfiguration) -> Harness {
        var h = Harness(configuration)
        h.join("g", "v", "a", "b", "c", "d")
        for (index, user) in ["a", "b", "c"].enumerated() { h.type("g", user, at: index + 1) }
        return h
    }

    @Test(
        "K = 3: three typers are named, the fourth makes the clause several for those who see four; ids are listed as before"
    )
    func boundary() {
        var h = Self.fourTypers(EngineConfiguration(severalAfter: 3))
        #expect(
            h.type("g", "d", at: 4) == [
                "@4 g v: [a,b,c,d] Several people are typing...",
                "@4 g a: [b,c,d] B, C, and D are typing...",
                "@4 g b: [a,c,d] A, C, and D are typing...",
                "@4 g c: [a,b,d] A, B, and D are typing..."
            ])
        // a stops: v sees three again, named; a saw those three already.
        let five = h.run(.send(conv: ID("g"), user: ID("a")), at: 5)
        #expect(five.first == "@5 g v: [b,c,d] B, C, and D are typing...")
        #expect(!five.contains { $0.hasPrefix("@5 g a:") }, "\(five)")
    }

    @Test("K = 2: a clause of three is several; two are named")
    func smallerLimit() {
        var h = Harness(EngineConfiguration(severalAfter: 2))
        h.join("g", "v", "a", "b", "c")
        h.type("g", "a", at: 1)
        #expect(h.type("g", "b", at: 2).first == "@2 g v: [a,b] A and B are typing...")
        #expect(
            h.type("g", "c", at: 3) == [
                "@3 g v: [a,b,c] Several people are typing...",
                "@3 g a: [b,c] B and C are typing...",
                "@3 g b: [a,c] A and C are typing..."
            ])
    }

    @Test(
        "without --several-after, and with K at or above the typers, nothing changes",
        arguments: [nil, 4, Int(Int32.max)])
    func off(limit: Int?) {
        var h = Self.fourTypers(EngineConfiguration(severalAfter: limit))
        #expect(h.type("g", "d", at: 4).first == "@4 g v: [a,b,c,d] A, B, and 2 others are typing...")
    }

    @Test("out of range is clamped: 0 and below act as 1, so two typers are several")
    func clamped() {
        for limit in [0, -5, Int.min] {
            var h = Harness(EngineConfiguration(severalAfter: limit))
            #expect(h.engine.configuration.severalAfter == 1)
            h.join("g", "v", "a", "b")
            #expect(h.type("g", "a", at: 1).first == "@1 g v: [a] A is typing...")
            #expect(h.type("g", "b", at: 2).first == "@2 g v: [a,b] Several people are typing...")
        }
        #expect(Harness(EngineConfiguration(severalAfter: Int.max)).engine.configuration.severalAfter == Int(Int32.max))
    }

    @Test(
        "both styles, and the chat list's: a clause past K names nobody in any of them",
        arguments: [
            EngineConfiguration.Style.group, .compact
        ])
    func styles(style: EngineConfiguration.Style) {
        var h = Self.fourTypers(EngineConfiguration(style: style, listStyle: style, severalAfter: 3))
        h.run(.open(conv: ID("g"), user: ID("v"), view: .list), at: 3)
        let four = h.type("g", "d", at: 4)
        #expect(four.first == "@4 g v(list): [a,b,c,d] Several people are typing...")
        // The typers see three: named as the style says.
        #expect(
            four[1]
                == (style == .group
                    ? "@4 g a: [b,c,d] B, C, and D are typing..."
                    : "@4 g a: [b,c,d] B and 2 others are typing..."))
    }

    @Test("activities: each clause is judged by its own n; only the big one names nobody")
    func activities() {
        var h = Harness(EngineConfiguration(severalAfter: 2))
        h.join("g", "v", "a", "b", "c", "d", "e")
        for (index, user) in ["a", "b", "c"].enumerated() { h.type("g", user, at: index + 1) }
        h.run(.type(conv: ID("g"), user: ID("d"), activity: .recordingAudio), at: 4)
        #expect(
            h.run(.type(conv: ID("g"), user: ID("e"), activity: .recordingAudio), at: 5).first
                == "@5 g v: [a,b,c,d,e] {typing,typing,typing,recording_audio,recording_audio} Several people are typing; D and E are recording audio..."
        )
        h.run(.type(conv: ID("g"), user: ID("v"), activity: .recordingAudio), at: 6)
        let written = h.run(.type(conv: ID("g"), user: ID("a"), activity: .recordingAudio), at: 7)
        // a now records too, first in order: b sees four recording and one typing, v
        // three and two.
        #expect(
            written.contains(
                "@7 g b: [a,c,d,e,v] {recording_audio,typing,recording_audio,recording_audio,recording_audio} Several people are recording audio; C is typing..."
            ),
            "\(written)")
        #expect(
            written.contains(
                "@7 g v: [a,b,c,d,e] {recording_audio,typing,typing,recording_audio,recording_audio} Several people are recording audio; B and C are typing..."
            ),
            "\(written)")
    }

    @Test("--max-listed still decides the ids and more; several decides only the text")
    func maxListed() {
        var h = Self.fourTypers(EngineConfiguration(maxListed: 2, severalAfter: 3))
        #expect(
            h.type("g", "d", at: 4) == [
                "@4 g v: [a,b] more 2 Several people are typing...",
                "@4 g a: [b,c] more 1 B, C, and D are typing...",
                "@4 g b: [a,c] more 1 A, C, and D are typing...",
                "@4 g c: [a,b] more 1 A, B, and D are typing..."
            ])
    }

    @Test("unnamed typers: past K the clause is several, not \"n people\"")
    func unnamed() {
        var h = Harness(EngineConfiguration(severalAfter: 2))
        h.join("g", "v")
        for user in ["x", "y", "z"] { h.run(.join(conv: ID("g"), user: ID(user))) }
        h.type("g", "x", at: 1)
        #expect(h.type("g", "y", at: 2).first == "@2 g v: [x,y] 2 people are typing...")
        #expect(h.type("g", "z", at: 3).first == "@3 g v: [x,y,z] Several people are typing...")
    }

    @Test("each viewer's table: its several, plural by n, or its 0+n when it has none")
    func tables() {
        var h = Harness(EngineConfiguration(phrases: Self.book, severalAfter: 2))
        h.run(.join(conv: ID("g"), user: ID("q"), name: "Q", locale: "qq"))
        h.run(.join(conv: ID("g"), user: ID("p"), name: "P", locale: "pl-x"))
        h.run(.join(conv: ID("g"), user: ID("v"), name: "V"))
        h.join("g", "a", "b", "c", "d", "e")
        for (index, user) in ["a", "b"].enumerated() { h.type("g", user, at: index + 1) }
        #expect(
            h.type("g", "c", at: 3).prefix(3) == [
                "@3 g q: [a,b,c] a few (3) typing:few.",
                "@3 g p: [a,b,c] 3 persons are typing...",
                "@3 g v: [a,b,c] Several people are typing..."
            ])
        h.type("g", "d", at: 4)
        #expect(
            h.type("g", "e", at: 5).prefix(3) == [
                "@5 g q: [a,b,c,d,e] many (5) typing:other.",
                "@5 g p: [a,b,c,d,e] 5 persons are typing...",
                "@5 g v: [a,b,c,d,e] Several people are typing..."
            ])
    }

    @Test(
        "random transcripts with --several-after: the engine writes exactly what the plain model writes",
        arguments: [
            EngineConfiguration(typingEvents: true, severalAfter: 2),
            EngineConfiguration(
                style: .compact, audience: .open, order: .recent, maxListed: 2, listStyle: .group, severalAfter: 1),
            EngineConfiguration(order: .name, maxListed: 1, severalAfter: 3)
        ])
    func model(configuration: EngineConfiguration) {
        for seed in 0..<4 {
            if let difference = ReferenceModelTests.differ(
                configuration: configuration, seed: UInt64(31_000 + seed),
                steps: 500, convs: 2, users: 8)
            {
                Issue.record(Comment(rawValue: difference))
                return
            }
        }
    }
}
