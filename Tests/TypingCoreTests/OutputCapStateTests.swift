import Testing
import TypingCore
import TypingTestSupport

/// `--max-output-per-line` decides from what the protocol shows (the members now in
/// the room, the typers now typing), never from who came and went, so a process
/// rebuilt from a snapshot refuses exactly what the original refuses; and the
/// forgotten screens a command tells are owed from earlier steps, so they never make
/// a command refused (Protocol.md#bounded-output).
@Suite("Output cap: decided by the state the protocol shows")
struct OutputCapStateTests {
    /// `h`'s snapshot, replayed into a new engine without a cap (the replay renders
    /// rooms as they fill), which then runs under `cap`.
    static func rebuilt(_ h: inout Harness, cap: Int?) -> Harness {
        var events: [Event] = []
        h.engine.apply(Request(.snapshot, line: 1), to: &events)
        var configuration = h.engine.configuration
        configuration.maxOutputPerLine = nil
        var rebuilt = Harness(configuration, checksEveryStep: false)
        EngineSnapshotTests.rebuild(from: events, into: &rebuilt)
        rebuilt.engine.setMaxOutputPerLine(cap)
        return rebuilt
    }

    /// Events without their line numbers (the rebuilt engine read other lines).
    static func unnumbered(_ events: [String]) -> [String] {
        events.map { event in
            guard event.hasPrefix("error ") || event.hasPrefix("ok ") else { return event }
            let words = event.split(separator: " ")
            return ([words[0]] + words.dropFirst(2)).joined(separator: " ")
        }
    }

    @Test(
        "screens forgotten by offline never wedge a capped room: every command naming it is applied, in the original and rebuilt"
    )
    func forgottenScreensDoNotWedge() {
        var h = Harness(EngineConfiguration(audience: .members, maxOutputPerLine: 5_000))
        let room = ID("room")
        for index in 0..<50 { h.run(.join(conv: room, user: ID("m\(index)"), name: "Member \(index)"), at: 1) }
        h.run(.join(conv: room, user: ID("x"), name: "X"), at: 1)
        for index in 0..<50 { h.run(.open(conv: room, user: ID("m\(index)"), thread: ID("t")), at: 2) }
        for index in 0..<50 { #expect(h.run(.offline(user: ID("m\(index)")), at: 3) == []) }
        #expect(h.engine.conversations[h.engine.findConversation(room)!].staleSlots.count == 50)
        var rebuilt = Self.rebuilt(&h, cap: 5_000)
        let commands: [(Command, Int)] = [
            (.leave(conv: room, user: ID("m0")), 4),
            (.join(conv: room, user: ID("m0")), 5),
            (.open(conv: room, user: ID("m1")), 6),
            (.close(conv: room, user: ID("m1")), 7),
            (.user(user: ID("m2"), name: "Renamed"), 8),
            (.type(conv: room, user: ID("m3"), thread: ID("nobody-here")), 9),
            (.tick, 100_009),
            (.leave(conv: room, user: ID("m0")), 100_010)
        ]
        for (command, at) in commands {
            let original = h.run(command, at: at)
            #expect(!original.contains { $0.hasSuffix(" limit") }, "\(command): \(original)")
            #expect(Self.unnumbered(rebuilt.run(command, at: at)) == Self.unnumbered(original), "\(command)")
        }
        // The first command told the 49 screens still waiting: none waits now.
        #expect(h.engine.conversations[h.engine.findConversation(room)!].staleSlots.isEmpty)
        h.engine.checkInvariants()
        rebuilt.engine.checkInvariants()
    }

    @Test("a member who left no longer counts: a long id gone, the bound is the one a rebuilt process computes")
    func departedMemberDoesNotCount() {
        let configuration = EngineConfiguration(maxOutputPerLine: 1_000)
        var h = Harness(configuration)
        let room = ID("g")
        h.join("g", "a", "b")
        let long = ID(String(repeating: "z", count: 256))
        h.run(.join(conv: room, user: long), at: 1)
        h.run(.leave(conv: room, user: long), at: 2)
        var rebuilt = Self.rebuilt(&h, cap: 1_000)
        let type = Command.type(conv: room, user: ID("a"))
        #expect(h.engine.outputBound(of: type) == rebuilt.engine.outputBound(of: type))
        let original = h.run(type, at: 3)
        #expect(original == ["@3 g b: [a] A is typing..."])
        #expect(rebuilt.run(type, at: 3) == original)
    }

    @Test("a typer who stopped no longer counts: a long name gone, the bound is the one a rebuilt process computes")
    func stoppedTyperDoesNotCount() {
        var h = Harness(EngineConfiguration(maxOutputPerLine: 3_000))
        let room = ID("g")
        h.join("g", "a", "b", "c")
        let long = String(repeating: "\u{1242B}", count: 15)
        #expect(h.run(.user(user: ID("c"), name: long), at: 1) == [])
        #expect(h.type("g", "c", at: 2).count == 2)
        h.run(.send(conv: room, user: ID("c")), at: 3)
        // Renamed while typing: the old name leaves the tally, the new one enters.
        h.type("g", "b", at: 4)
        #expect(h.run(.user(user: ID("b"), name: long), at: 5).count == 2)
        #expect(h.run(.user(user: ID("b"), name: "Bo"), at: 6).count == 2)
        var rebuilt = Self.rebuilt(&h, cap: 3_000)
        let type = Command.type(conv: room, user: ID("a"))
        #expect(h.engine.outputBound(of: type) == rebuilt.engine.outputBound(of: type))
        #expect(rebuilt.run(type, at: 7) == h.run(type, at: 7))
    }

    /// Long ids and names, so that who is in the room moves the bound.
    static func command(_ rng: inout SplitMix64, step: Int) -> Command {
        let conv = ID("c\(rng.below(2))")
        let user =
            rng.below(4) == 0
            ? ID("long\(rng.below(3))" + String(repeating: "\u{1}", count: 60 + rng.below(60)))
            : ID("u\(rng.below(8))")
        let thread: Identifier? = rng.below(3) == 0 ? nil : ID("t\(rng.below(2))")
        let name: String? =
            rng.below(3) == 0 ? String(repeating: "\u{61C}n", count: 1 + rng.below(14)) : "N\(rng.below(5))"
        switch rng.below(16) {
        case 0, 1:
            return .join(
                conv: conv, user: user, name: rng.below(3) == 0 ? nil : name,
                receiveTyping: rng.below(6) == 0 ? rng.below(2) == 0 : nil)
        case 2: return .leave(conv: conv, user: user)
        case 3:
            if let thread, rng.below(3) == 0 { return .open(conv: conv, user: user, thread: thread, pane: .side) }
            return .open(
                conv: conv, user: user, thread: thread, view: rng.below(5) == 0 && thread == nil ? .list : .chat)
        case 4: return .close(conv: conv, user: user, pane: rng.below(4) == 0 ? .side : .main)
        case 5: return .offline(user: user)
        case 6: return .user(user: user, name: name)
        case 7: return .send(conv: conv, user: user, thread: thread)
        case 8: return .forget(conv: conv, user: user)
        default:
            return .type(
                conv: conv, user: user, thread: thread, timeout: rng.below(4) == 0 ? 1 + rng.below(6000) : nil,
                activity: Activity.allCases[rng.below(3) == 0 ? rng.below(7) : 0], empty: rng.below(10) == 0)
        }
    }

    @Test(
        "random capped sessions: rebuilt from a snapshot, a process writes and refuses what the original does",
        arguments: [600, 1_500, 4_000, 12_000])
    func rebuiltDecidesAlike(cap: Int) {
        var refused = 0, applied = 0
        for (index, configuration) in RandomWorkloadTests.configurations.enumerated() {
            for seed in 0..<6 {
                let seedValue = UInt64(41_000 + cap + index * 100 + seed)
                var rng = SplitMix64(seed: seedValue)
                var capped = configuration
                capped.maxOutputPerLine = cap
                var h = Harness(capped, checksEveryStep: false)
                var time = 0
                for step in 0..<300 {
                    time += rng.below(300)
                    h.run(Self.command(&rng, step: step), at: time)
                }
                var rebuilt = Self.rebuilt(&h, cap: cap)
                #expect(EngineSnapshotTests.content(&rebuilt) == EngineSnapshotTests.content(&h), "seed \(seedValue)")
                for step in 0..<300 {
                    time += rng.below(150)
                    let command = Self.command(&rng, step: step)
                    let expected = Self.unnumbered(h.run(command, at: time))
                    let actual = Self.unnumbered(rebuilt.run(command, at: time))
                    #expect(actual == expected, "seed \(seedValue), step \(step): \(command)")
                    if actual != expected { return }
                    if expected.contains(where: { $0.hasSuffix(" limit") }) { refused += 1 } else { applied += 1 }
                }
                h.engine.checkInvariants()
                rebuilt.engine.checkInvariants()
            }
        }
        // The cap decided both ways: the sessions test refusals, not only applied commands.
        #expect(refused > 20 && applied > 20, "refused \(refused), applied \(applied)")
    }
}
