import Testing
import TypingCore

/// Entering and leaving a thread's screen, being forgotten and being told cost the
/// same per step however large the room and whatever the order members do it in:
/// the member sets are counted in words and entries touched
/// (``ConversationRecord/slotSetWork``), not timed.
@Suite("Thread screens: work per step independent of the room's size")
struct ThreadScreenCostTests {
    enum Order: CaseIterable { case joinOrder, reverse }

    /// `size` members open thread `t` (and a view of the main chat, then close it),
    /// then go offline (their screens forgotten), in `order`; returns the set work
    /// per member. The thread stays in use until the last offline.
    static func workPerMember(size: Int, order: Order) -> Double {
        #if TYPINGD_INTERNAL_CHECKS
        var h = Harness(EngineConfiguration(audience: .members), checksEveryStep: false)
        let room = ID("room")
        for index in 0..<size { h.run(.join(conv: room, user: ID("m\(index)")), at: 1) }
        let members = order == .joinOrder ? Array(0..<size) : Array((0..<size).reversed())
        let c = h.engine.findConversation(room)!
        let before = h.engine.conversations[c].slotSetWork
        for index in members { h.run(.open(conv: room, user: ID("m\(index)")), at: 2) }
        for index in members { h.run(.close(conv: room, user: ID("m\(index)")), at: 3) }
        for index in members { h.run(.open(conv: room, user: ID("m\(index)"), thread: ID("t")), at: 4) }
        for index in members.dropLast() { h.run(.offline(user: ID("m\(index)")), at: 5) }
        let work = h.engine.conversations[c].slotSetWork - before
        #expect(h.engine.conversations[c].staleSlots.count == size - 1)
        h.engine.checkInvariants()
        return Double(work) / Double(size)
        #else
        return 0
        #endif
    }

    @Test(
        "opening, closing, entering a thread and being forgotten: the same work per member at 1,000 and 8,000, in join order and reverse",
        .enabled(if: Engine.hasInvariantChecker, "the sets count their work only in builds with the checker"),
        arguments: Order.allCases)
    func flatInSize(order: Order) {
        let small = Self.workPerMember(size: 1_000, order: order)
        let large = Self.workPerMember(size: 8_000, order: order)
        // Each step touches a few words (a level per 64 times 64 slots), never a
        // shifted run of the room's slots.
        #expect(large <= 40, "\(large) per member at 8,000 (\(small) at 1,000)")
        #expect(large <= small * 1.25 + 2, "\(large) per member at 8,000, \(small) at 1,000")
    }
}
