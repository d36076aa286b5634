import Testing
import TypingCore

/// A thread open in a side pane beside the main screen, each with its own line
/// (Protocol.md#side-panes).
@Suite("Side panes")
struct SidePaneTests {
    /// Mo follows the channel and, in his side pane, thread `launch`.
    static func room(_ configuration: EngineConfiguration = EngineConfiguration()) -> Harness {
        var h = Harness(configuration)
        h.join("dev", "mo", "lu", "kai")
        return h
    }

    @Test("each screen has its own line: the channel's typers on the main screen, the thread's in the side pane")
    func twoLines() {
        var h = Self.room()
        #expect(h.run(.open(conv: ID("dev"), user: ID("mo"), thread: ID("launch"), pane: .side), at: 10) == [])
        #expect(
            h.type("dev", "lu", at: 20) == ["@20 dev mo: [lu] Lu is typing...", "@20 dev kai: [lu] Lu is typing..."])
        #expect(
            h.run(.type(conv: ID("dev"), user: ID("kai"), thread: ID("launch")), at: 30)
                == ["@30 dev#launch mo(side): [kai] Kai is typing..."])
        // A typer who moves from the channel into the thread: viewers in join order,
        // and for each, the main screen, then the side pane.
        #expect(
            h.run(.type(conv: ID("dev"), user: ID("lu"), thread: ID("launch")), at: 40)
                == ["@40 dev mo: [] ", "@40 dev#launch mo(side): [kai,lu] Kai and Lu are typing...", "@40 dev kai: [] "]
        )
    }

    @Test("opening the side pane again where it is forgets nothing; at another thread it starts from nothing")
    func reopen() {
        var h = Self.room()
        h.run(.open(conv: ID("dev"), user: ID("mo"), thread: ID("a"), pane: .side), at: 1)
        h.run(.type(conv: ID("dev"), user: ID("lu"), thread: ID("a")), at: 2)
        #expect(h.run(.open(conv: ID("dev"), user: ID("mo"), thread: ID("a"), pane: .side), at: 3) == [])
        #expect(h.run(.open(conv: ID("dev"), user: ID("mo"), thread: ID("b"), pane: .side), at: 4) == [])
        #expect(
            h.run(.open(conv: ID("dev"), user: ID("mo"), thread: ID("a"), pane: .side), at: 5)
                == ["@5 dev#a mo(side): [lu] Lu is typing..."])
        // Removed: nothing is written, and the thread nobody looks at is forgotten
        // once nobody types there either.
        #expect(h.run(.close(conv: ID("dev"), user: ID("mo"), pane: .side), at: 6) == [])
        #expect(h.run(.close(conv: ID("dev"), user: ID("mo"), pane: .side), at: 7) == [], "no side pane: a no-op")
        h.run(.send(conv: ID("dev"), user: ID("lu"), thread: ID("a")), at: 8)
        let c = h.engine.findConversation(ID("dev"))!
        #expect(h.engine.conversations[c].threads.count == 0)
    }

    @Test("a streak stops on open or close only when neither screen shows where it is")
    func streaksAndPanes() {
        var h = Self.room(EngineConfiguration(typingEvents: true))
        h.run(.open(conv: ID("dev"), user: ID("mo"), thread: ID("a"), pane: .side), at: 1)
        h.run(.type(conv: ID("dev"), user: ID("mo"), thread: ID("a")), at: 2)
        // The main screen moves to thread b: the side pane still shows a.
        #expect(
            !h.run(.open(conv: ID("dev"), user: ID("mo"), thread: ID("b")), at: 3).contains { $0.contains("stopped") })
        // Closing the main screen: the side pane still shows a.
        #expect(!h.run(.close(conv: ID("dev"), user: ID("mo")), at: 4).contains { $0.contains("stopped") })
        // The side pane moves to c: neither screen shows a any more.
        #expect(
            h.run(.open(conv: ID("dev"), user: ID("mo"), thread: ID("c"), pane: .side), at: 5)
                .contains("@5 dev#a mo stopped closed"))
        // Typing in the channel, then closing the side pane: the main screen (the
        // closed chat at the main timeline) shows it, so it goes on.
        h.type("dev", "mo", at: 6)
        #expect(!h.run(.close(conv: ID("dev"), user: ID("mo"), pane: .side), at: 7).contains { $0.contains("stopped") })
        // A side pane at thread d and typing there; closing it stops the streak.
        h.run(.open(conv: ID("dev"), user: ID("mo"), thread: ID("d"), pane: .side), at: 8)
        #expect(
            h.run(.type(conv: ID("dev"), user: ID("mo"), thread: ID("d")), at: 9).contains("@9 dev mo stopped moved"))
        #expect(h.run(.close(conv: ID("dev"), user: ID("mo"), pane: .side), at: 10) == ["@10 dev#d mo stopped closed"])
    }

    @Test("under --audience open a side pane shows while it is set, whether the main view is open or not")
    func audienceOpen() {
        var h = Self.room(EngineConfiguration(audience: .open))
        h.run(.open(conv: ID("dev"), user: ID("mo"), thread: ID("a"), pane: .side), at: 1)
        #expect(
            h.run(.type(conv: ID("dev"), user: ID("lu"), thread: ID("a")), at: 2) == [
                "@2 dev#a mo(side): [lu] Lu is typing..."
            ])
        #expect(h.type("dev", "kai", at: 3) == [], "nobody's main view is open")
        #expect(h.run(.open(conv: ID("dev"), user: ID("mo")), at: 4) == ["@4 dev mo: [kai] Kai is typing..."])
    }

    @Test("receive_typing off hides both screens; on again, the side pane is compared from nothing")
    func receiveTyping() {
        var h = Self.room()
        h.run(.open(conv: ID("dev"), user: ID("mo"), thread: ID("a"), pane: .side), at: 1)
        h.run(.type(conv: ID("dev"), user: ID("lu"), thread: ID("a")), at: 2)
        #expect(h.run(.user(user: ID("mo"), receiveTyping: false), at: 3) == [])
        #expect(h.run(.type(conv: ID("dev"), user: ID("kai"), thread: ID("a")), at: 4) == [])
        #expect(
            h.run(.user(user: ID("mo"), receiveTyping: true), at: 5) == [
                "@5 dev#a mo(side): [lu,kai] Lu and Kai are typing..."
            ])
    }

    @Test("offline removes every side pane of the user, writing nothing; leaving ends both screens")
    func offlineAndLeave() {
        var h = Harness()
        h.join("x", "mo", "lu")
        h.join("y", "mo", "lu")
        h.run(.open(conv: ID("x"), user: ID("mo"), thread: ID("a"), pane: .side), at: 1)
        h.run(.open(conv: ID("y"), user: ID("mo"), thread: ID("b"), pane: .side), at: 1)
        h.run(.type(conv: ID("x"), user: ID("lu"), thread: ID("a")), at: 2)
        #expect(h.run(.offline(user: ID("mo")), at: 3) == [])
        #expect(h.engine.sidePanes[user: h.engine.findUser(ID("mo"))!] == nil)
        #expect(h.run(.type(conv: ID("x"), user: ID("lu"), thread: ID("a")), at: 4) == [])
        h.run(.open(conv: ID("y"), user: ID("lu"), thread: ID("b"), pane: .side), at: 5)
        h.run(.type(conv: ID("y"), user: ID("mo"), thread: ID("b")), at: 6)
        #expect(h.run(.leave(conv: ID("y"), user: ID("lu")), at: 7) == [])
        #expect(h.run(.leave(conv: ID("y"), user: ID("mo")), at: 8) == [])
        #expect(h.engine.findConversation(ID("y")) == nil)
    }

    @Test("a snapshot lists the side pane, and the rebuilt engine writes what the original writes")
    func snapshot() {
        var h = Self.room()
        h.run(.open(conv: ID("dev"), user: ID("mo"), thread: ID("a"), pane: .side), at: 1)
        h.run(.type(conv: ID("dev"), user: ID("lu"), thread: ID("a")), at: 2)
        #expect(EngineSnapshotTests.snapshot(&h).contains("member dev mo name=Mo sendTyping=true open=false side=a"))
        var events: [Event] = []
        h.engine.apply(Request(.snapshot, line: 1), to: &events)
        var rebuilt = Harness()
        EngineSnapshotTests.rebuild(from: events, into: &rebuilt)
        for (command, at) in [
            (Command.type(conv: ID("dev"), user: ID("kai"), thread: ID("a")), 3),
            (.close(conv: ID("dev"), user: ID("mo"), pane: .side), 4),
            (.open(conv: ID("dev"), user: ID("mo"), thread: ID("a"), pane: .side), 5)
        ] {
            #expect(rebuilt.run(command, at: at) == h.run(command, at: at), "\(command)")
        }
    }

    @Test(
        "a keystroke in the channel visits the same viewers whether or not every member has a side pane on a thread of their own",
        .enabled(if: Engine.hasInvariantChecker, "viewers compared are counted only in builds with the checker"))
    func channelKeystrokeCost() {
        #if TYPINGD_INTERNAL_CHECKS
        func compared(sidePanes: Bool) -> Int {
            var h = Harness(checksEveryStep: false)
            for index in 0..<2_000 { h.run(.join(conv: ID("big"), user: ID("m\(index)"))) }
            if sidePanes {
                for index in 0..<2_000 {
                    h.run(.open(conv: ID("big"), user: ID("m\(index)"), thread: ID("own\(index)"), pane: .side), at: 1)
                }
            }
            h.type("big", "m0", at: 2)
            let before = h.engine.viewersCompared
            for step in 0..<20 { h.type("big", "m\(1 + step)", at: 3 + step) }
            return h.engine.viewersCompared - before
        }
        let plain = compared(sidePanes: false), withPanes = compared(sidePanes: true)
        #expect(plain > 0 && withPanes == plain, "with side panes \(withPanes), without \(plain)")
        #endif
    }
}
