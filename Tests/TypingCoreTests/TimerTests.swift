import Testing
import TypingCore

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
        var h = Harness(checksEveryStep: false)
        h.join("g", "a", "b")
        for _ in 0..<50_000 {
            h.type("g", "a")
            h.run(.send(conv: ID("g"), user: ID("a")))
        }
        #expect(h.engine.timers.count <= 2 * h.engine.streaks.count + 1025)
        #expect(h.engine.streaks.records.count <= 1, "streak slots are reused")
    }

    @Test("after many streaks end, the streak storage and the timer heap shrink back")
    func storageShrinks() {
        var h = Harness(checksEveryStep: false)
        let rooms = 20_000
        for r in 0..<rooms { h.join("r\(r)", "a\(r)", "b\(r)") }
        for r in 0..<rooms { h.type("r\(r)", "a\(r)", at: r / 100) }
        #expect(h.engine.typingCount == rooms && h.engine.timers.count == rooms)
        _ = h.drain()
        #expect(h.engine.typingCount == 0)
        #expect(h.engine.streaks.records.capacity < 64, "the streak slab gave its storage back")
        #expect(h.engine.timers.count == 0)
        h.engine.checkInvariants()
        #expect(h.engine.timers.heap.unordered.capacity < 8192, "the heap was rebuilt small")
    }
}
