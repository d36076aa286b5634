import Testing
import TypingCore

/// Rooms above `--quiet-above` show nobody typing (Protocol.md#quiet-large-rooms).
@Suite("Quiet large rooms")
struct QuietRoomTests {
    @Test(
        "a room that grows past the limit is told once that nobody types, then nothing; back at the limit, everyone is compared"
    )
    func crossing() {
        var h = Harness(EngineConfiguration(typingEvents: true, quietAbove: 3))
        h.join("hall", "ana", "ben", "cy")
        #expect(
            h.type("hall", "ana", at: 1) == [
                "@1 hall ana started", "@1 hall ben: [ana] Ana is typing...",
                "@1 hall cy: [ana] Ana is typing..."
            ])
        // The fourth member: every screen showing someone is sent the empty indicator.
        #expect(
            h.run(.join(conv: ID("hall"), user: ID("dee"), name: "Dee"), at: 2)
                == ["@2 hall ben: [] ", "@2 hall cy: [] "])
        // Streaks and typing events go on; no indicator is written.
        #expect(h.type("hall", "ben", at: 3) == ["@3 hall ben started"])
        #expect(
            h.run(.query(conv: ID("hall")), at: 4) == [
                "state hall members=[\"ana\", \"ben\", \"cy\", \"dee\"] typing=[\"ana\", \"ben\"]"
            ])
        // Back at three: every screen is compared with what it was sent (nothing).
        #expect(
            h.run(.leave(conv: ID("hall"), user: ID("dee")), at: 5)
                == [
                    "@5 hall ana: [ben] Ben is typing...", "@5 hall ben: [ana] Ana is typing...",
                    "@5 hall cy: [ana,ben] Ana and Ben are typing..."
                ])
    }

    @Test(
        "threads, side panes and chat-list rows are hushed too, and told again in join order, main screen then side pane"
    )
    func everyScreen() {
        var h = Harness(EngineConfiguration(quietAbove: 3))
        h.join("hall", "ana", "ben", "cy")
        h.run(.open(conv: ID("hall"), user: ID("ana"), thread: ID("t"), pane: .side), at: 1)
        h.run(.open(conv: ID("hall"), user: ID("ben"), view: .list), at: 1)
        h.run(.type(conv: ID("hall"), user: ID("cy"), thread: ID("t")), at: 2)
        h.type("hall", "ana", at: 3)
        #expect(
            h.run(.join(conv: ID("hall"), user: ID("dee"), name: "Dee"), at: 4)
                == ["@4 hall#t ana(side): [] ", "@4 hall ben(list): [] ", "@4 hall cy: [] "])
        #expect(h.run(.type(conv: ID("hall"), user: ID("dee"), thread: ID("t")), at: 5) == [])
        #expect(
            h.run(.remove(conv: ID("hall"), user: ID("dee"), by: nil), at: 6)
                == [
                    "@6 hall#t ana(side): [cy] Cy is typing...", "@6 hall ben(list): [ana] Ana is typing...",
                    "@6 hall cy: [ana] Ana is typing..."
                ])
    }

    @Test("under --audience open, a join with no open view takes the room past the limit too: open screens are cleared")
    func crossingUnderOpenAudience() {
        // The join renders no screen of its own (the joiner's view is closed), but
        // the room is above the limit all the same (found by ReferenceModelV4Tests).
        var h = Harness(EngineConfiguration(audience: .open, quietAbove: 3))
        h.join("hall", "ana", "ben", "cy")
        h.run(.open(conv: ID("hall"), user: ID("ana")), at: 1)
        h.run(.open(conv: ID("hall"), user: ID("ana"), thread: ID("t"), pane: .side), at: 1)
        h.type("hall", "ben", at: 2)
        h.run(.type(conv: ID("hall"), user: ID("cy"), thread: ID("t")), at: 2)
        #expect(
            h.run(.join(conv: ID("hall"), user: ID("dee"), name: "Dee"), at: 3)
                == ["@3 hall ana: [] ", "@3 hall#t ana(side): [] "])
        #expect(h.type("hall", "cy", at: 4) == [])
        #expect(
            h.run(.leave(conv: ID("hall"), user: ID("dee")), at: 5)
                == ["@5 hall ana: [ben,cy] Ben and Cy are typing..."])
    }

    @Test(
        "a keystroke in a room above the limit compares no viewer, however large the room",
        .enabled(if: Engine.hasInvariantChecker, "viewers compared are counted only in builds with the checker"))
    func keystrokeCost() {
        #if TYPINGD_INTERNAL_CHECKS
        var h = Harness(EngineConfiguration(quietAbove: 100), checksEveryStep: false)
        for index in 0..<3_000 { h.run(.join(conv: ID("big"), user: ID("m\(index)"))) }
        let before = h.engine.viewersCompared
        for step in 0..<50 {
            #expect(h.type("big", "m\(step)", at: step) == [])
        }
        #expect(h.engine.viewersCompared == before)
        h.engine.checkInvariants()
        #endif
    }
}
