import Testing
@testable import TypingCore

@Suite("Timer heap")
struct TimerTests {
    @Test("keystrokes move a deadline without touching the heap")
    func keystrokesCostNoHeapWork() {
        var h = Harness()
        h.join("g", "a", "b")
        for time in stride(from: 0, to: 10_000, by: 100) { h.type("g", "a", at: time) }
        #expect(h.engine.timers.count == 1)
        #expect(h.engine.nextDeadline() == 12_900)
        #expect(h.run(.tick, at: 12_899) == [])
        #expect(h.run(.tick, at: 12_900) == ["@12900 g b: [] "])
    }

    @Test("stale entries of stopped streaks are dropped and never fire")
    func staleEntries() {
        var h = Harness()
        h.join("g", "a", "b")
        h.type("g", "a", at: 0)
        h.run(.send(conv: ID("g"), user: ID("a")))
        h.type("g", "a", at: 10)
        #expect(h.engine.timers.count == 2)
        #expect(h.run(.tick, at: 3000) == [], "the first streak's entry is stale")
        #expect(h.engine.timers.count == 1)
        #expect(h.run(.tick, at: 3010) == ["@3010 g b: [] "])
        #expect(h.engine.nextDeadline() == nil)
    }

    @Test("a clock that never advances cannot grow the heap without bound")
    func heapStaysBounded() {
        var h = Harness()
        h.join("g", "a", "b")
        for _ in 0..<50_000 {
            h.type("g", "a")
            h.run(.send(conv: ID("g"), user: ID("a")))
        }
        #expect(h.engine.timers.count <= 2 * h.engine.streaks.count + 1025)
        #expect(h.engine.streaks.count == 1, "streak slots are reused")
    }
}
