import Testing
import TypingCore

/// Threads: a keystroke in a thread costs its viewers, not the room; a thread nobody
/// types in or looks at is forgotten.
@Suite("Threads")
struct ThreadTests {
    @Test(
        "a keystroke in a thread of a 10,000-member room compares the thread's viewers, not the room",
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
