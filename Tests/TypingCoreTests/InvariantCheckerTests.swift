import Testing
import TypingCore

/// The invariant checker finds what it is for: each test damages one structure of
/// a sound engine and expects the checker to say so.
@Suite(
    "Invariant checker",
    .enabled(
        if: Engine.hasInvariantChecker,
        "this build has no invariant checker (it is empty without TYPINGD_INTERNAL_CHECKS)"))
struct InvariantCheckerTests {
    /// An engine with members, typers, an open view and a shared view.
    static func sound() -> Engine {
        var h = Harness(EngineConfiguration(audience: .open))
        h.join("g", "a", "b", "c")
        h.join("h", "a", "d")
        h.run(.open(conv: ID("g"), user: ID("c")))
        h.type("g", "a", at: 1)
        h.type("g", "b", at: 2)
        h.type("h", "d", at: 3)
        #expect(h.engine.invariantViolations().isEmpty)
        return h.engine
    }

    static func expectViolation(_ engine: Engine, _ fragment: String) {
        let problems = engine.invariantViolations()
        #expect(problems.contains { $0.contains(fragment) }, "expected \"\(fragment)\" among \(problems)")
    }

    @Test("a viewer's indicator that is out of date")
    func staleIndicator() {
        var engine = Self.sound()
        let c = engine.findConversation(ID("g"))!
        let slot = engine.conversations[c].slot(of: engine.findUser(ID("c"))!)!
        engine.conversations[c].setLastSent(.empty, at: slot)
        Self.expectViolation(engine, "was last sent")
    }

    @Test("a streak missing from the live index")
    func liveIndex() {
        var engine = Self.sound()
        let s = engine.conversations[engine.findConversation(ID("h"))!].members[1].streak
        engine.streakIndex.remove(hash: engine.streaks[s].pairHash, record: s)
        Self.expectViolation(engine, "live index")
    }

    @Test("a typer tree with a wrong size")
    func treeSize() {
        var engine = Self.sound()
        let c = engine.findConversation(ID("g"))!
        engine.streaks[links: engine.conversations[c].main.typers.root, tree: .location].size += 5
        Self.expectViolation(engine, "counts")
    }

    @Test("a named count that disagrees with the typers")
    func namedCount() {
        var engine = Self.sound()
        engine.conversations[engine.findConversation(ID("g"))!].main.typers.namedCount += 1
        Self.expectViolation(engine, "named typers")
    }

    @Test("an alarm missing from the timer queue")
    func timers() {
        var engine = Self.sound()
        engine.timers.rebuild([])
        Self.expectViolation(engine, "alarms in the timer queue")
    }

    @Test("an open view the user does not list")
    func openViews() {
        var engine = Self.sound()
        _ = engine.openViews.removeAll(for: engine.findUser(ID("c"))!)
        Self.expectViolation(engine, "open view")
    }

    @Test("a slab whose count disagrees with its records")
    func slab() {
        var engine = Self.sound()
        engine.users.corruptCountForTesting()
        Self.expectViolation(engine, "users: counts")
    }

    @Test("a hash index entry that cannot be reached from its home")
    func indexTable() {
        var table = IndexTable()
        for record: Int32 in 0..<5 { table.insert(hash: UInt64(record) << 32, record: UserIndex(rawValue: record)) }
        #expect(table.violations().isEmpty)
        table.corruptForTesting(position: 9)
        #expect(!table.violations().isEmpty)
    }
}
