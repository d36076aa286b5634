import Testing
@testable import TypingCore

@Suite("Snapshots")
struct EngineSnapshotTests {
    /// The `member` and `snapshot` events a snapshot writes.
    static func snapshot(_ h: inout Harness) -> [String] {
        h.run(.snapshot).filter { !$0.hasPrefix("ok") }
    }

    @Test("replaying a snapshot as join and open rebuilds membership, join order, names, settings and views")
    func roundTrip() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            var h = Harness(EngineConfiguration(audience: .open), checksEveryStep: false)
            for step in 0..<300 {
                let conv = ID("c\(Int.random(in: 0..<6, using: &rng))"), user = ID("u\(Int.random(in: 0..<12, using: &rng))")
                switch Int.random(in: 0..<8, using: &rng) {
                case 0, 1: h.run(.join(conv: conv, user: user, name: Bool.random() ? "N\(step % 7)" : nil,
                                       sendTyping: ([true, false, nil] as [Bool?]).randomElement() ?? nil))
                case 2: h.run(.leave(conv: conv, user: user))
                case 3: h.run(.open(conv: conv, user: user))
                case 4: h.run(.close(conv: conv, user: user))
                case 5: h.run(.user(user: user, name: step % 3 == 0 ? " \t" : "R\(step)"))
                case 6: h.run(.type(conv: conv, user: user), at: step)
                default: h.run(.offline(user: user))
                }
            }
            h.engine.checkInvariants()
            let original = Self.snapshot(&h)
            var rebuilt = Harness(EngineConfiguration(audience: .open))
            var events: [Event] = []
            h.engine.apply(Request(line: 1, command: .snapshot), to: &events)
            for case .member(let m) in events {
                rebuilt.run(.join(conv: m.conv, user: m.user, name: m.name, sendTyping: m.sendTyping))
                if m.open { rebuilt.run(.open(conv: m.conv, user: m.user)) }
            }
            #expect(Self.snapshot(&rebuilt) == original)
        }
    }

    @Test("a snapshot counts as a command and leaves the state as it was")
    func readOnly() {
        var h = Harness()
        h.join("g", "a", "b")
        h.type("g", "a", at: 5)
        #expect(h.run(.snapshot, id: .integer(3)) == [
            "member g a name=A sendTyping=true open=false", "member g b name=B sendTyping=true open=false",
            "snapshot conversations=1 members=2",
        ])
        #expect(h.engine.typingCount == 1 && h.engine.commandsApplied == 4)
    }
}
