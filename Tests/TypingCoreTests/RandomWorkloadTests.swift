import Testing
import TypingCore
import TypingTestSupport

/// Random workloads: every command (languages, threads, views, activities,
/// settings), in every configuration that changes how it behaves, with the
/// invariant checker after every step. The checker compares every viewer's last
/// indicator with what they see now (their location, table and style, activities,
/// the stale members), so this is the broad check that renders miss no viewer and
/// write no stale view.
@Suite("Random workloads")
struct RandomWorkloadTests {
    /// Two small tables besides English: one with plural forms in subjects and
    /// verbs, one with a clause that puts the verb first.
    static let book: PhraseBook = {
        do {
            let de = try PhraseTable(
                locale: "de", plural: PluralRules([.one: "i = 1 and v = 0"]),
                names: [
                    "0+1": .plain("Jemand"), "0+n": .plain("{r} Personen"), "1": .plain("{0}"),
                    "1+1": .plain("{0} und noch jemand"), "1+n": .plain("{0} und {r} weitere"),
                    "2": .plain("{0} und {1}"), "2+1": .plain("{0}, {1} und noch jemand"),
                    "2+n": .plain("{0}, {1} und {r} weitere"), "3": .plain("{0}, {1} und {2}")
                ],
                verbs: Dictionary(
                    uniqueKeysWithValues: Activity.phrased.map {
                        ($0, PhraseTable.Text.plural([.one: "tut \($0.name)", .other: "tun \($0.name)"]))
                    }),
                clause: "{names} {verb}", separator: "; ", end: " …")
            let xx = try PhraseTable(
                locale: "xx-YY",
                plural: PluralRules([.zero: "n = 0", .one: "n = 1", .few: "n % 10 = 2..4 and n % 100 != 12..14"]),
                names: [
                    "0+1": .plain("?"), "0+n": .plural([.few: "{r} few", .other: "{r} many"]), "1": .plain("<{0}>"),
                    "1+1": .plain("<{0}>+1"), "1+n": .plural([.few: "<{0}>+{r}f", .other: "<{0}>+{r}"]),
                    "2": .plain("<{0}|{1}>"), "2+1": .plain("<{0}|{1}>+1"), "2+n": .plain("<{0}|{1}>+{r}"),
                    "3": .plain("<{0}|{1}|{2}>")
                ],
                verbs: Dictionary(
                    uniqueKeysWithValues: Activity.phrased.map { ($0, PhraseTable.Text.plain($0.name.uppercased())) }),
                clause: "{verb}: {names}", separator: " / ", end: "")
            return try PhraseBook(tables: [de, xx], defaultLocale: "de-CH")
        } catch {
            preconditionFailure("test tables: \(error)")
        }
    }()

    static let configurations: [EngineConfiguration] = [
        EngineConfiguration(typingEvents: true, phrases: book),
        EngineConfiguration(
            style: .compact, typingEvents: true, audience: .open, order: .recent, maxListed: 2,
            listStyle: .group, phrases: book),
        EngineConfiguration(order: .name, maxListed: 1, phrases: book),
        EngineConfiguration(typingEvents: true, audience: .open, order: .name, listStyle: .compact),
        // Rooms of more than 3 members show nobody typing (Protocol.md#quiet-large-rooms):
        // the random rooms cross it both ways.
        EngineConfiguration(typingEvents: true, order: .recent, maxListed: 2, phrases: book, quietAbove: 3)
    ]

    /// A random command over a few conversations, threads, users and locales.
    static func command(_ rng: inout SplitMix64, step: Int) -> Command {
        let conv = ID("c\(rng.below(3))"), user = ID("u\(rng.below(9))")
        let thread: Identifier? = rng.below(3) == 0 ? nil : ID("t\(rng.below(3))")
        let locales: [String?] = [nil, "de", "DE-at", "xx-YY-z", "fr", "en"]
        switch rng.below(20) {
        case 0, 1:
            return .join(
                conv: conv, user: user, name: rng.below(4) == 0 ? nil : "N\(rng.below(6))",
                sendTyping: rng.below(8) == 0 ? false : (rng.below(3) == 0 ? true : nil),
                locale: locales[rng.below(locales.count)],
                receiveTyping: rng.below(6) == 0 ? !(rng.below(2) == 0) : nil)
        case 2: return rng.below(2) == 0 ? .leave(conv: conv, user: user) : .remove(conv: conv, user: user, by: nil)
        case 3, 4:
            if rng.below(3) == 0 {
                // A side pane, beside whatever the main screen shows.
                return .open(conv: conv, user: user, thread: ID("t\(rng.below(3))"), pane: .side)
            }
            let list = rng.below(4) == 0
            return .open(conv: conv, user: user, thread: list ? nil : thread, view: list ? .list : .chat)
        case 5: return .close(conv: conv, user: user, pane: rng.below(3) == 0 ? .side : .main)
        case 6:
            return .user(
                user: user, name: rng.below(3) == 0 ? "R\(step % 5)" : nil,
                sendTyping: rng.below(5) == 0 ? rng.below(2) == 0 : nil,
                locale: locales[rng.below(locales.count)],
                receiveTyping: rng.below(3) == 0 ? rng.below(2) == 0 : nil)
        case 7: return .offline(user: user)
        case 8: return .send(conv: conv, user: user, thread: thread)
        case 9: return .query(conv: conv, thread: thread)
        default:
            return .type(
                conv: conv, user: user, thread: thread,
                timeout: rng.below(4) == 0 ? 1 + rng.below(6000) : nil,
                activity: Activity.allCases[rng.below(3) == 0 ? rng.below(7) : 0], empty: rng.below(10) == 0)
        }
    }

    @Test(
        "every step keeps every structure and every viewer's indicator right",
        arguments: RandomWorkloadTests.configurations.indices)
    func invariantsHold(configuration index: Int) {
        for seed in 0..<6 {
            var rng = SplitMix64(seed: UInt64(index * 100 + seed))
            var h = Harness(Self.configurations[index])
            var time = 0
            for step in 0..<700 {
                time += rng.below(300)
                h.run(Self.command(&rng, step: step), at: time)
            }
            _ = h.drain()
            #expect(h.engine.typingCount == 0)
        }
    }

    @Test(
        "with announcements, every step keeps every structure right, announcements of gone screens included",
        arguments: [300, 2_500])
    func invariantsHoldWithAnnouncements(after: Int) {
        for seed in 0..<4 {
            var rng = SplitMix64(seed: UInt64(90_000 + after + seed))
            var configuration = Self.configurations[seed % Self.configurations.count]
            configuration.announceAfter = after
            var h = Harness(configuration)
            var time = 0
            var announced = 0
            for step in 0..<700 {
                time += rng.below(300)
                announced += h.run(Self.command(&rng, step: step), at: time).filter { $0.hasPrefix("announce") }.count
            }
            announced += h.drain().filter { $0.hasPrefix("announce") }.count
            #expect(announced > 0, "seed \(seed): the sessions announce something")
            #expect(h.engine.announcements.pendingCount == 0)
        }
    }

    @Test(
        "a snapshot rebuilds a random session, and the rebuilt engine writes what the original writes",
        arguments: RandomWorkloadTests.configurations.indices)
    func snapshotRoundTrip(configuration index: Int) {
        Self.roundTrip(Self.configurations[index], seeds: (0..<8).map { UInt64(7_000 + index * 100 + $0) })
    }

    @Test(
        "with announcements, a snapshot rebuilds every screen's pending announcement and what it last announced",
        arguments: RandomWorkloadTests.configurations.indices, [300, 700])
    func snapshotRoundTripWithAnnouncements(configuration index: Int, after: Int) {
        var configuration = Self.configurations[index]
        configuration.announceAfter = after
        // Rooms above 3 are quiet most of the time here, and quiet rooms announce
        // nothing: above 6, they cross the limit now and then.
        if configuration.quietAbove != nil { configuration.quietAbove = 6 }
        Self.roundTrip(
            configuration, seeds: (0..<10).map { UInt64(8_000 + index * 100 + after + $0) }, announcing: true)
    }

    /// Runs a random session per seed, rebuilds a second engine from its snapshot,
    /// and checks that both list the same snapshot and write the same events for
    /// the same random commands afterwards, and at the end of input. `announcing`:
    /// each session's snapshot has a pending announcement and a last announced text
    /// somewhere, and the events after it hold announcements.
    static func roundTrip(_ configuration: EngineConfiguration, seeds: [UInt64], announcing: Bool = false) {
        var pendingSeen = 0, announcedSeen = 0, announcementsAfter = 0
        for seed in seeds {
            var rng = SplitMix64(seed: seed)
            var h = Harness(configuration, checksEveryStep: false)
            var time = 0
            for step in 0..<400 {
                time += rng.below(300)
                // With announcements, a pause now and then lets screens settle.
                if let after = configuration.announceAfter, rng.below(4) == 0 { time += rng.below(2 * after) }
                h.run(Self.command(&rng, step: step), at: time)
            }
            if configuration.announceAfter != nil {
                // A burst of commands just before the snapshot, whose indicators are
                // still pending at it.
                for step in 0..<8 {
                    time += rng.below(40)
                    h.run(Self.command(&rng, step: step), at: time)
                }
            }
            h.engine.checkInvariants()
            var events: [Event] = []
            h.engine.apply(Request(.snapshot, line: 1), to: &events)
            var rebuilt = Harness(configuration)
            EngineSnapshotTests.rebuild(from: events, into: &rebuilt)
            rebuilt.engine.checkInvariants()
            #expect(EngineSnapshotTests.content(&rebuilt) == EngineSnapshotTests.content(&h), "seed \(seed)")
            for case .member(let m) in events {
                for state in [m.announcement, m.sideAnnouncement] {
                    if state.due != nil { pendingSeen += 1 }
                    if state.announced != nil { announcedSeen += 1 }
                }
            }
            for step in 0..<300 {
                time += rng.below(120)
                if let after = configuration.announceAfter, rng.below(4) == 0 { time += rng.below(2 * after) }
                let command = Self.command(&rng, step: step)
                // Line numbers differ (the rebuilt engine read other lines).
                func unnumbered(_ events: [String]) -> [String] {
                    events.map { $0.hasPrefix("error ") || $0.hasPrefix("ok ") ? String($0.prefix(3)) : $0 }
                }
                let expected = unnumbered(h.run(command, at: time)), actual = unnumbered(rebuilt.run(command, at: time))
                #expect(actual == expected, "seed \(seed), step \(step): \(command)")
                if actual != expected { return }
                announcementsAfter += expected.filter { $0.hasPrefix("announce") }.count
            }
            let expected = h.drain(), actual = rebuilt.drain()
            #expect(actual == expected, "seed \(seed): the end of input")
            announcementsAfter += expected.filter { $0.hasPrefix("announce") }.count
        }
        if announcing {
            #expect(pendingSeen > 0, "a pending announcement is rebuilt")
            #expect(announcedSeen > 0, "a last announced text is rebuilt")
            #expect(announcementsAfter > 0, "announcements are written after the snapshot")
        }
    }
}
