import Testing
import TypingCore
import TypingTestSupport

/// The members a render visits: at a location, those who can receive there. A
/// member who receives nothing, or whose screen is elsewhere, costs nothing per
/// change of the typers there.
@Suite("Renders visit only their audience")
struct RenderAudienceTests {
    @Test("a slot set agrees with a plain set through inserts, removals and walks", arguments: [70, 5_000, 300_000])
    func slotSet(range: Int) {
        var rng = SplitMix64(seed: UInt64(range))
        var set = SlotSet()
        var reference = Set<Int>()
        for step in 0..<4_000 {
            let slot = rng.below(range)
            if rng.below(3) == 0 {
                set.remove(slot)
                reference.remove(slot)
            } else {
                set.insert(slot)
                reference.insert(slot)
            }
            #expect(set.contains(slot) == reference.contains(slot))
            if step % 500 == 0 || step == 3_999 {
                #expect(set.violations().isEmpty, "\(set.violations())")
                #expect(set.elements == reference.sorted())
                #expect(set.count == reference.count)
                let probe = rng.below(range + 10)
                #expect(set.next(from: probe) == reference.filter { $0 >= probe }.min())
            }
        }
        for slot in reference { set.remove(slot) }
        #expect(set.count == 0 && set.next(from: 0) == nil && set.violations().isEmpty)
    }

    @Test(
        "a slot set agrees with a plain set as it grows and shrinks through its three forms, and gives its storage back",
        arguments: [64, 200, 5_000, 300_000])
    func slotSetForms(range: Int) {
        var rng = SplitMix64(seed: UInt64(range) &+ 17)
        var set = SlotSet()
        var reference = Set<Int>()
        for round in 0..<6 {
            // Grow past the array's limit, then shrink below a quarter of it.
            let high = SlotSet.sparseLimit + 1 + rng.below(80), low = rng.below(SlotSet.sparseLimit / 4)
            for target in [high, low] {
                while reference.count != min(target, range) {
                    let slot = reference.count < target ? rng.below(range) : reference.randomElement(using: &rng) ?? 0
                    if reference.count < target {
                        set.insert(slot)
                        reference.insert(slot)
                    } else {
                        set.remove(slot)
                        reference.remove(slot)
                    }
                    #expect(set.violations().isEmpty, "round \(round): \(set.violations())")
                    #expect(set.count == reference.count)
                }
                #expect(set.elements == reference.sorted(), "round \(round)")
                let probe = rng.below(range + 10)
                #expect(set.next(from: probe) == reference.filter { $0 >= probe }.min())
                #expect(set == SlotSet(reference.shuffled(using: &rng)), "equal whatever the order it was built in")
            }
        }
        for slot in reference { set.remove(slot) }
        #expect(set.isEmpty && set.storedEntries == 0, "an empty set keeps \(set.storedEntries) entries")
    }

    /// Viewers compared by `body` (0 in a build without the checker's counters).
    static func compared(_ h: inout Harness, _ body: (inout Harness) -> Void) -> Int {
        #if TYPINGD_INTERNAL_CHECKS
        let before = h.engine.viewersCompared
        body(&h)
        return h.engine.viewersCompared - before
        #else
        body(&h)
        return 0
        #endif
    }

    /// Two typers take turns in the main timeline of a room where `silent` other
    /// members cannot see them (`how`); returns the viewers compared over `rounds`
    /// rounds of type and send.
    static func cost(silent: Int, how: Silence, audience: EngineConfiguration.Audience, rounds: Int) -> Int {
        var h = Harness(EngineConfiguration(audience: audience), checksEveryStep: false)
        h.join("room", "ana", "ben")
        if audience == .open {
            h.run(.open(conv: ID("room"), user: ID("ana")))
            h.run(.open(conv: ID("room"), user: ID("ben")))
        }
        for index in 0..<silent {
            let user = ID("m\(index)")
            switch how {
            case .receivesNothing:
                h.run(.join(conv: ID("room"), user: user, receiveTyping: false))
                if audience == .open { h.run(.open(conv: ID("room"), user: user)) }
            case .inAThread:
                h.run(.join(conv: ID("room"), user: user))
                h.run(.open(conv: ID("room"), user: user, thread: ID("t\(index)")))
            }
        }
        h.engine.checkInvariants()
        let count = compared(&h) { h in
            for round in 0..<rounds {
                let typer = round % 2 == 0 ? "ana" : "ben"
                h.run(.type(conv: ID("room"), user: ID(typer)), at: 10 * round + 1)
                h.run(.send(conv: ID("room"), user: ID(typer)), at: 10 * round + 5)
            }
        }
        h.engine.checkInvariants()
        return count
    }

    enum Silence: CaseIterable { case receivesNothing, inAThread }

    @Test(
        "members who receive nothing, and screens in threads, are not visited by main-timeline renders",
        .enabled(if: Engine.hasInvariantChecker, "viewers compared are counted only in builds with the checker"),
        arguments: Silence.allCases, [EngineConfiguration.Audience.members, .open])
    func silentMembersCostNothing(how: Silence, audience: EngineConfiguration.Audience) {
        let small = Self.cost(silent: 0, how: how, audience: audience, rounds: 40)
        let big = Self.cost(silent: 2_000, how: how, audience: audience, rounds: 40)
        #expect(small > 0)
        #expect(big == small, "\(big) viewers compared with 2,000 silent members, \(small) with none")
    }

    @Test(
        "a thread's render visits its viewers who receive typing, not its silent ones",
        .enabled(if: Engine.hasInvariantChecker, "viewers compared are counted only in builds with the checker"))
    func silentThreadViewers() {
        var h = Harness(checksEveryStep: false)
        h.join("room", "ana", "ben")
        h.run(.open(conv: ID("room"), user: ID("ben"), thread: ID("t")))
        for index in 0..<500 {
            h.run(.join(conv: ID("room"), user: ID("m\(index)"), receiveTyping: false))
            h.run(.open(conv: ID("room"), user: ID("m\(index)"), thread: ID("t")))
        }
        h.engine.checkInvariants()
        let count = Self.compared(&h) { h in
            #expect(
                h.run(.type(conv: ID("room"), user: ID("ana"), thread: ID("t")), at: 10)
                    == ["@10 room#t ben: [ana] Ana is typing..."])
        }
        #expect(count <= 2, "\(count) viewers compared")
        // One of them starts receiving again: told at once, and visited from then on.
        #expect(h.run(.user(user: ID("m7"), receiveTyping: true), at: 20) == ["@20 room#t m7: [ana] Ana is typing..."])
        h.engine.checkInvariants()
        // The last silent viewer keeps the thread in use after the others leave it.
        for index in 0..<500 where index != 7 { h.run(.close(conv: ID("room"), user: ID("m\(index)")), at: 30) }
        h.engine.checkInvariants()
    }

    @Test(
        "finding a viewer's phrase reads as many stored variants among 3,000 languages as among 3",
        .enabled(if: Engine.hasInvariantChecker, "variants read are counted only in builds with the checker"))
    func manyLanguagesCost() throws {
        #if TYPINGD_INTERNAL_CHECKS
        func entriesRead(languages: Int) throws -> Int {
            let tables = try (0..<languages).map { index in
                try PhraseTable(
                    locale: "x\(index)", plural: .none,
                    names: Dictionary(
                        uniqueKeysWithValues: PhraseTable.nameKeys.map { ($0, PhraseTable.Text.plain("n\(index)")) }),
                    verbs: Dictionary(
                        uniqueKeysWithValues: Activity.phrased.map { ($0, PhraseTable.Text.plain("v\(index)")) }),
                    clause: "{names} {verb}", separator: "; ", end: ".")
            }
            var h = Harness(EngineConfiguration(phrases: try PhraseBook(tables: tables)), checksEveryStep: false)
            h.join("room", "ana")
            h.type("room", "ana", at: 1)
            for index in 0..<languages {
                h.run(.join(conv: ID("room"), user: ID("m\(index)"), locale: "x\(index)"), at: 2)
            }
            let before = h.engine.variantEntriesRead
            for step in 0..<200 {
                h.run(.open(conv: ID("room"), user: ID("m0"), view: step % 2 == 0 ? .list : .chat), at: 3)
            }
            h.engine.checkInvariants()
            return h.engine.variantEntriesRead - before
        }
        let few = try entriesRead(languages: 3), many = try entriesRead(languages: 3_000)
        #expect(few > 0)
        #expect(many <= few + 400, "200 opens read \(many) stored variants among 3,000 languages, \(few) among 3")
        #endif
    }

    @Test(
        "a member who receives no typing is told nothing when they join or open a view of a room with a thread in use")
    func silentMemberOfRoomWithThreads() {
        var h = Harness()
        h.join("dev", "ana", "ben")
        h.run(.open(conv: ID("dev"), user: ID("ana"), thread: ID("release")), at: 1)
        h.type("dev", "ben", at: 2)
        // With a thread in use a render merges audiences; the one member the command
        // names is visited too, and must still be left out.
        #expect(h.run(.join(conv: ID("dev"), user: ID("quiet"), receiveTyping: false), at: 3) == [])
        #expect(h.run(.open(conv: ID("dev"), user: ID("quiet")), at: 4) == [])
        #expect(h.run(.open(conv: ID("dev"), user: ID("quiet"), thread: ID("release")), at: 5) == [])
    }
}

/// Every applied command that names a conversation renders it, also when it changed
/// none of its typers (Protocol.md#who-sees-what); a render of a command that changed
/// nothing visits only the screens waiting to be told.
@Suite("Every command naming a conversation renders it")
struct RenderEveryCommandTests {
    @Test("closing a thread while a teammate types in the channel shows the channel's typers at once")
    func closeFromThread() {
        var h = Harness()
        h.join("dev", "ana", "ben", "cy")
        h.run(.open(conv: ID("dev"), user: ID("ana"), thread: ID("release")), at: 100)
        #expect(h.run(.type(conv: ID("dev"), user: ID("ben")), at: 200) == ["@200 dev cy: [ben] Ben is typing..."])
        #expect(h.run(.close(conv: ID("dev"), user: ID("ana")), at: 300) == ["@300 dev ana: [ben] Ben is typing..."])
    }

    @Test("closing the chat list's row shows the chat's typers at once")
    func closeFromList() {
        var h = Harness()
        h.join("dev", "ana", "ben")
        h.run(.open(conv: ID("dev"), user: ID("ana"), view: .list), at: 100)
        #expect(
            h.run(.type(conv: ID("dev"), user: ID("ben")), at: 200) == ["@200 dev ana(list): [ben] Ben is typing..."])
        #expect(h.run(.close(conv: ID("dev"), user: ID("ana")), at: 300) == ["@300 dev ana: [ben] Ben is typing..."])
    }

    @Test(
        "a screen offline forgot is told at the next command naming its conversation",
        arguments: ["send", "empty type", "hidden type", "typer's keystroke", "join again", "leave", "remove", "close"])
    func forgottenScreenTold(by command: String) {
        var h = Harness()
        h.join("dev", "ana", "ben", "cy", "dee")
        h.run(.join(conv: ID("dev"), user: ID("eve"), sendTyping: false))
        h.run(.open(conv: ID("dev"), user: ID("cy"), thread: ID("release")), at: 100)
        h.type("dev", "ben", at: 200)
        h.run(.offline(user: ID("cy")), at: 300)
        let told = ["@400 dev cy: [ben] Ben is typing..."]
        let events: [String]
        switch command {
        case "send": events = h.run(.send(conv: ID("dev"), user: ID("cy")), at: 400)
        case "empty type": events = h.run(.type(conv: ID("dev"), user: ID("dee"), empty: true), at: 400)
        case "hidden type": events = h.run(.type(conv: ID("dev"), user: ID("eve")), at: 400)
        case "typer's keystroke": events = h.type("dev", "ben", at: 400)
        case "join again": events = h.run(.join(conv: ID("dev"), user: ID("dee")), at: 400)
        case "leave": events = h.run(.leave(conv: ID("dev"), user: ID("dee")), at: 400)
        case "remove": events = h.run(.remove(conv: ID("dev"), user: ID("dee"), by: ID("ana")), at: 400)
        default: events = h.run(.close(conv: ID("dev"), user: ID("dee")), at: 400)
        }
        #expect(events == told, "\(command)")
        // Told once: nothing more until something changes.
        #expect(h.run(.send(conv: ID("dev"), user: ID("cy")), at: 500) == [])
    }

    @Test("a query, and commands naming other conversations, tell the forgotten screen nothing")
    func queryDoesNotRender() {
        var h = Harness()
        h.join("dev", "ana", "ben", "cy")
        h.join("other", "cy", "dee")
        h.run(.open(conv: ID("dev"), user: ID("cy"), thread: ID("release")), at: 100)
        h.type("dev", "ben", at: 200)
        h.run(.offline(user: ID("cy")), at: 300)
        #expect(h.run(.query(conv: ID("dev")), at: 400).allSatisfy { $0.hasPrefix("state") })
        #expect(h.run(.send(conv: ID("other"), user: ID("dee")), at: 500) == [])
        #expect(h.run(.user(user: ID("dee"), name: "Dee"), at: 600) == [])
        #expect(h.run(.send(conv: ID("dev"), user: ID("ana")), at: 700) == ["@700 dev cy: [ben] Ben is typing..."])
    }

    @Test("forget leaves a screen waiting to be told, writing nothing itself")
    func forgetWritesNothing() {
        var h = Harness()
        h.join("dev", "ana", "ben", "cy")
        h.type("dev", "ben", at: 200)
        #expect(h.run(.forget(conv: ID("dev"), user: ID("cy")), at: 300) == [])
        #expect(h.run(.forget(conv: ID("dev"), user: ID("nobody")), at: 300) == ["error 6 not_member"])
        #expect(h.run(.send(conv: ID("dev"), user: ID("ana")), at: 400) == ["@400 dev cy: [ben] Ben is typing..."])
    }

    @Test(
        "a command that changes nothing visits only the screens waiting to be told, never the whole room",
        .enabled(if: Engine.hasInvariantChecker, "viewers compared are counted only in builds with the checker"))
    func unchangedCommandCost() {
        #if TYPINGD_INTERNAL_CHECKS
        var h = Harness(checksEveryStep: false)
        h.join("room", "ana", "ben")
        for index in 0..<2_000 { h.run(.join(conv: ID("room"), user: ID("m\(index)"))) }
        h.type("room", "ben", at: 10)
        for index in 0..<3 { h.run(.forget(conv: ID("room"), user: ID("m\(index)")), at: 20) }
        h.engine.checkInvariants()
        var before = h.engine.viewersCompared
        #expect(h.run(.send(conv: ID("room"), user: ID("ana")), at: 30).count == 3)
        #expect(h.engine.viewersCompared - before == 3, "\(h.engine.viewersCompared - before) viewers compared")
        before = h.engine.viewersCompared
        for step in 0..<100 {
            h.run(.send(conv: ID("room"), user: ID("ana")), at: 40 + step)
            h.run(.type(conv: ID("room"), user: ID("ana"), empty: true), at: 40 + step)
            h.run(.close(conv: ID("room"), user: ID("ana")), at: 40 + step)
        }
        #expect(
            h.engine.viewersCompared == before,
            "commands that change nothing compared \(h.engine.viewersCompared - before) viewers")
        h.engine.checkInvariants()
        #endif
    }

    @Test(
        "after every applied command naming a conversation, none of its screens waits to be told (random sessions)",
        arguments: RandomWorkloadTests.configurations.indices)
    func nothingWaitsAfterACommand(configuration index: Int) {
        for seed in 0..<5 {
            var rng = SplitMix64(seed: UInt64(31_000 + index * 100 + seed))
            var h = Harness(RandomWorkloadTests.configurations[index])
            var time = 0
            for step in 0..<600 {
                time += rng.below(300)
                let command = RandomWorkloadTests.command(&rng, step: step)
                let events = h.run(command, at: time)
                guard let conv = command.namedConversation, !events.contains(where: { $0.hasPrefix("error") }),
                    let c = h.engine.findConversation(conv)
                else { continue }
                if case .query = command { continue }
                #expect(h.engine.conversations[c].staleSlots.isEmpty, "seed \(seed), step \(step): \(command)")
            }
        }
    }
}

extension Command {
    /// The conversation a command names, if any.
    var namedConversation: Identifier? {
        switch self {
        case let .join(conv, _, _, _, _, _), let .type(conv, _, _, _, _, _, _), let .send(conv, _, _),
            let .leave(conv, _), let .remove(conv, _, _), let .open(conv, _, _, _, _), let .close(conv, _, _),
            let .query(conv, _), let .forget(conv, _), let .restore(conv, _, _, _, _):
            return conv
        case .offline, .user, .tick, .stats, .snapshot:
            return nil
        }
    }
}
