import Testing
import TypingCore

/// Timeouts: a keystroke's own `timeout_ms`, a timer queue that stays bounded
/// whatever deadlines keystrokes set, and keystrokes at the end of time.
@Suite("Timeouts")
struct TimeoutTests {
    @Test("timeout_ms per keystroke: a shorter one brings the deadline forward, a longer one moves it back")
    func timeoutPerKeystroke() {
        var h = Harness(EngineConfiguration(typingEvents: true))
        h.join("g", "a", "b")
        h.run(.type(conv: ID("g"), user: ID("a"), timeout: 30_000), at: 0)
        h.run(.type(conv: ID("g"), user: ID("a"), timeout: 500), at: 100)
        #expect(h.run(.tick, at: 599) == [])
        #expect(h.run(.tick, at: 600) == ["@600 g a stopped timeout", "@600 g b: [] "])
        h.type("g", "a", at: 1000)
        h.run(.type(conv: ID("g"), user: ID("a"), timeout: 10_000), at: 1100)
        #expect(h.run(.tick, at: 11_099) == [] && h.engine.typingCount == 1)
        #expect(h.run(.tick, at: 11_100).count == 2)
        #expect(h.engine.timers.count <= 1, "stale alarms were dropped")
    }

    @Test("keystrokes with ever earlier deadlines keep the timer queue bounded")
    func timerQueueBounded() {
        var h = Harness(checksEveryStep: false)
        h.join("g", "a", "b")
        for index in 0..<20_000 {
            h.run(.type(conv: ID("g"), user: ID("a"), timeout: 86_400_000 - index))
        }
        #expect(h.engine.typingCount == 1)
        #expect(h.engine.timers.count <= 2 * 1 + 1024 + 1, "\(h.engine.timers.count) entries for one streak")
        h.engine.checkInvariants()
    }

    @Test("a keystroke at the end of time times out at the next command; snapshot lists no streak due now")
    func endOfTime() {
        var h = Harness(EngineConfiguration(typingEvents: true))
        h.join("g", "a", "b")
        #expect(
            h.type("g", "a", at: Engine.maxTime) == [
                "@\(Engine.maxTime) g a started", "@\(Engine.maxTime) g b: [a] A is typing..."
            ])
        let snapshot = h.run(.snapshot)
        #expect(snapshot.first == "@\(Engine.maxTime) g a stopped timeout", "\(snapshot)")
        #expect(!snapshot.contains { $0.hasPrefix("streak") }, "\(snapshot)")
        #expect(snapshot.last == "snapshot conversations=1 members=2 typing=0")
    }
}
