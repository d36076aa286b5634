import Testing
import TypingCore

/// The engine used as a library, with values the daemon's decoder would reject:
/// it must answer them (or clamp them), never trap.
@Suite("The engine as a library")
struct EngineLibraryTests {
    @Test("ids far longer than the protocol's 256 bytes work end to end", arguments: [257, 40_000, 70_000])
    func longIDs(length: Int) {
        var h = Harness()
        let long = String(repeating: "u", count: length)
        h.run(.join(conv: ID(long), user: ID(long), name: "Long"))
        h.run(.join(conv: ID(long), user: ID("v"), name: nil))
        let shown = h.type(long, long, at: 1)
        #expect(shown == ["@1 \(long) v: [\(long)] Long is typing..."])
        #expect(h.drain().count == 1)
    }

    @Test("an `at` outside 0 … 2^53−1 is bad_field, not a trap", arguments: [-1, Engine.maxTime + 1, Int.max, Int.min])
    func atOutOfRange(at: Int) {
        var h = Harness()
        #expect(h.run(.tick, at: at) == ["error 1 bad_field"])
        #expect(h.engine.now == 0)
    }

    @Test("the largest time: keystrokes there do not overflow, and the clock stays in range")
    func largestTime() {
        var h = Harness(EngineConfiguration(timeout: EngineConfiguration.timeoutRange.upperBound))
        h.join("g", "a", "b")
        #expect(h.type("g", "a", at: Engine.maxTime) == ["@\(Engine.maxTime) g b: [a] A is typing..."])
        var events: [Event] = []
        h.engine.advance(to: Int.max, sink: &events)
        #expect(h.engine.now == Engine.maxTime)
        h.engine.checkInvariants()
        #expect(events.count == 1)
    }

    @Test("configuration values outside their ranges are clamped into them")
    func clamping() {
        let engine = Engine(
            configuration: EngineConfiguration(
                timeout: -5, maxMembers: 0, maxMemberships: -1,
                maxConversations: Int.max))
        #expect(engine.configuration.timeout == 1)
        #expect(engine.configuration.maxMembers == 1 && engine.configuration.maxMemberships == 1)
        #expect(engine.configuration.maxConversations == Int(Int32.max))
        var h = Harness(EngineConfiguration(timeout: 0))
        h.join("g", "a", "b")
        h.type("g", "a", at: 10)
        #expect(h.run(.tick, at: 11) == ["@11 g b: [] "], "a timeout of 0 acts as 1 ms")
    }

    @Test("a user typing in many conversations goes offline: every streak stops once, in the order they began")
    func offlineInManyConversations() {
        var h = Harness(EngineConfiguration(typingEvents: true), checksEveryStep: false)
        let count = 5000
        for c in 0..<count { h.join("c\(c)", "u", "v\(c)") }
        for c in 0..<count { h.type("c\(c)", "u", at: 1) }
        // Some streaks end early, from the middle and both ends of the user's list.
        for c in [0, 17, 2500, count - 1] { h.run(.send(conv: ID("c\(c)"), user: ID("u"))) }
        let stops = h.run(.offline(user: ID("u")), at: 2).filter { $0.contains("stopped") }
        let expected = (0..<count).filter { ![0, 17, 2500, count - 1].contains($0) }.map {
            "@2 c\($0) u stopped offline"
        }
        #expect(stops.count == expected.count)
        #expect(zip(stops, expected).first { $0 != $1 } == nil, "in the order the streaks began")
        #expect(h.engine.typingCount == 0 && h.engine.membershipCount == 2 * count)
        h.engine.checkInvariants()
    }
}
