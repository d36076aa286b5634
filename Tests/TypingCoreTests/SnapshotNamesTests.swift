import Testing
import TypingCore
import TypingTestSupport

/// A snapshot restores to exactly the same state, names included: it lists each
/// name as the user gave it, so a rebuild's `join` cuts and cleans it as the
/// original did (the display name, cut after 15 graphemes with `...`, would be cut
/// again).
@Suite("Snapshots keep names as given")
struct SnapshotNamesTests {
    /// Names of the shapes that break a cut: a space, a combining mark, an emoji or
    /// a ZWJ sequence at the 15th grapheme, controls, spaces around, right-to-left
    /// marks, the literal "Someone", nothing left after cleaning.
    static let names: [String?] = [
        "Maria Fernanda Silva", "Maria Fernanda ", "Ana", " Ana\t", "Ana\u{1}\u{7F}",
        "abcdefghijklmn opq", "abcdefghijklmnop", "abcdefghijklmno",
        "abcdefghijklmn\u{301}opqr", String(repeating: "e\u{301}", count: 20),
        "abcdefghijklmn👩‍👩‍👧‍👦xyz", "🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂 🙂🙂", "\u{202E}evil name that is long",
        "Someone", "   ", "\u{85}\u{A0}", "", nil, "Zoë", "Zoe\u{308}",
        String(repeating: "x", count: 1024)
    ]

    @Test("a name cut after 15 graphemes round-trips: Maria Fernanda Silva")
    func mariaFernanda() {
        var h = Harness()
        h.run(.join(conv: ID("g"), user: ID("m"), name: "Maria Fernanda Silva"))
        h.run(.join(conv: ID("g"), user: ID("b"), name: "Bo"))
        h.type("g", "m", at: 10)
        var events: [Event] = []
        h.engine.apply(Request(.snapshot, line: 99), to: &events)
        var rebuilt = Harness()
        EngineSnapshotTests.rebuild(from: events, into: &rebuilt)
        #expect(EngineSnapshotTests.content(&rebuilt) == EngineSnapshotTests.content(&h))
        #expect(
            rebuilt.run(.join(conv: ID("g"), user: ID("c")), at: 20) == ["@20 g c: [m] Maria Fernanda... is typing..."])
        #expect(h.run(.join(conv: ID("g"), user: ID("c")), at: 20) == ["@20 g c: [m] Maria Fernanda... is typing..."])
    }

    @Test(
        "snapshot → rebuild → the same output for every following command (random sessions, hostile names)",
        arguments: 0..<4)
    func roundTrip(configuration index: Int) {
        let configuration = RandomWorkloadTests.configurations[index]
        for seed in 0..<4 {
            var rng = SplitMix64(seed: UInt64(51_000 + index * 100 + seed))
            var h = Harness(configuration, checksEveryStep: false)
            var time = 0
            // A snapshot every 80 commands, each rebuilt and run alongside the
            // original for the next 120.
            for round in 0..<5 {
                for step in 0..<80 {
                    time += rng.below(250)
                    h.run(Self.named(RandomWorkloadTests.command(&rng, step: step), &rng), at: time)
                }
                h.engine.checkInvariants()
                var events: [Event] = []
                h.engine.apply(Request(.snapshot, line: 1), to: &events)
                var original = h
                var rebuilt = Harness(configuration)
                EngineSnapshotTests.rebuild(from: events, into: &rebuilt)
                rebuilt.engine.checkInvariants()
                #expect(
                    EngineSnapshotTests.content(&rebuilt) == EngineSnapshotTests.content(&original),
                    "seed \(seed), round \(round)")
                var later = time
                for step in 0..<120 {
                    later += rng.below(120)
                    let command = Self.named(RandomWorkloadTests.command(&rng, step: step), &rng)
                    func unnumbered(_ events: [String]) -> [String] {
                        events.map { $0.hasPrefix("error ") || $0.hasPrefix("ok ") ? String($0.prefix(3)) : $0 }
                    }
                    let expected = unnumbered(original.run(command, at: later))
                    let actual = unnumbered(rebuilt.run(command, at: later))
                    #expect(actual == expected, "seed \(seed), round \(round), step \(step): \(command)")
                    if actual != expected { return }
                }
            }
        }
    }

    /// `command` with a hostile name wherever it sets one.
    static func named(_ command: Command, _ rng: inout SplitMix64) -> Command {
        switch command {
        case let .join(conv, user, name, sendTyping, locale, receiveTyping) where name != nil:
            return .join(
                conv: conv, user: user, name: names[rng.below(names.count)], sendTyping: sendTyping,
                locale: locale, receiveTyping: receiveTyping)
        case let .user(user, name, sendTyping, locale, receiveTyping) where name != nil:
            return .user(
                user: user, name: names[rng.below(names.count)] ?? "", sendTyping: sendTyping, locale: locale,
                receiveTyping: receiveTyping)
        default:
            return command
        }
    }
}

/// What users keep beside their records (locales, names as given) goes with them.
@Suite("Memory of users' settings")
struct SettingsMemoryTests {
    @Test("locales and given names of users who leave give their memory back", arguments: [20_000])
    func localesReturned(users: Int) {
        var h = Harness(checksEveryStep: false)
        for round in 0..<2 {
            for index in 0..<users {
                h.run(
                    .join(
                        conv: ID("c\(index % 50)"), user: ID("u\(index)"), name: "A rather long name \(index) here",
                        locale: "de-x\(index)"))
            }
            #expect(h.engine.locales.count == users && h.engine.givenNames.count == users, "round \(round)")
            for index in 0..<users { h.run(.leave(conv: ID("c\(index % 50)"), user: ID("u\(index)"))) }
            #expect(h.engine.locales.count == 0 && h.engine.givenNames.count == 0)
            #expect(
                h.engine.locales.storage.capacity < 256, "locales keep room for \(h.engine.locales.storage.capacity)")
            #expect(
                h.engine.givenNames.storage.capacity < 256,
                "names keep room for \(h.engine.givenNames.storage.capacity)")
        }
        h.engine.checkInvariants()
    }
}
