import Testing
import TypingCore

@Suite("Typing streaks and indicators")
struct EngineTypingTests {
    @Test("the other member sees a keystroke at once; the typer sees nothing")
    func oneToOne() {
        var h = Harness()
        h.join("dm", "alice", "bob")
        #expect(h.type("dm", "alice", at: 1000) == ["@1000 dm bob: [alice] Alice is typing..."])
        #expect(h.type("dm", "alice", at: 1500) == [], "a keystroke that changes nothing writes nothing")
        #expect(h.run(.tick, at: 4499) == [])
        #expect(h.run(.tick, at: 4500) == ["@4500 dm bob: [] "])
    }

    @Test("a streak times out at exactly the last keystroke plus the timeout")
    func timeoutBoundary() {
        var h = Harness(EngineConfiguration(timeout: 1000, typingEvents: true))
        h.join("g", "a", "b")
        h.type("g", "a", at: 0)
        #expect(h.type("g", "a", at: 999) == [])
        #expect(
            h.type("g", "a", at: 1999) == [
                "@1999 g a stopped timeout", "@1999 g b: [] ",
                "@1999 g a started", "@1999 g b: [a] A is typing..."
            ], "a keystroke at the deadline finds the streak ended and starts a new one")
    }

    @Test("typers are shown in the order their streaks began, and a restart goes to the end")
    func streakOrder() {
        var h = Harness()
        h.join("g", "a", "b", "c", "v")
        h.type("g", "a", at: 1)
        h.type("g", "b", at: 2)
        h.type("g", "c", at: 3)
        h.type("g", "a", at: 4)
        #expect(h.run(.send(conv: ID("g"), user: ID("a")), at: 5).last == "@5 g v: [b,c] B and C are typing...")
        #expect(h.type("g", "a", at: 6).last == "@6 g v: [b,c,a] B, C, and A are typing...")
    }

    @Test("equal deadlines fire in the order of the keystrokes that set them")
    func deadlineTies() {
        var h = Harness(EngineConfiguration(typingEvents: true))
        h.join("g", "a", "b", "v")
        h.type("g", "a", at: 0)
        h.type("g", "b", at: 0)
        h.type("g", "a", at: 0)
        let stops = h.drain().filter { $0.contains("stopped") }
        #expect(stops == ["@3000 g b stopped timeout", "@3000 g a stopped timeout"])
    }

    @Test(
        "every stop reason",
        arguments: [
            (Command.send(conv: ID("g"), user: ID("a")), "send"),
            (Command.type(conv: ID("g"), user: ID("a"), empty: true), "empty"),
            (Command.leave(conv: ID("g"), user: ID("a")), "leave"),
            (Command.remove(conv: ID("g"), user: ID("a"), by: ID("b")), "removed"),
            (Command.offline(user: ID("a")), "offline")
        ])
    func stopReasons(command: Command, reason: String) {
        var h = Harness(EngineConfiguration(typingEvents: true))
        h.join("g", "a", "b")
        h.type("g", "a", at: 10)
        #expect(h.run(command, at: 20) == ["@20 g a stopped \(reason)", "@20 g b: [] "])
        #expect(h.engine.typingCount == 0)
        #expect(h.drain() == [], "a stopped streak never times out")
    }

    @Test("send, empty and offline without a streak are no-ops")
    func stopsWithoutStreak() {
        var h = Harness(EngineConfiguration(typingEvents: true))
        h.join("g", "a", "b")
        #expect(h.run(.send(conv: ID("g"), user: ID("a"))) == [])
        #expect(h.type("g", "a", empty: true) == [])
        #expect(h.run(.offline(user: ID("a"))) == [])
        #expect(h.run(.offline(user: ID("nobody"))) == [], "an unknown user has no streaks")
    }

    @Test("offline stops every streak of the user in the order they began; memberships stay")
    func offlineOrder() {
        var h = Harness(EngineConfiguration(typingEvents: true))
        h.join("x", "a", "b")
        h.join("y", "a", "c")
        h.type("y", "a", at: 1)
        h.type("x", "a", at: 2)
        #expect(
            h.run(.offline(user: ID("a")), at: 3) == [
                "@3 y a stopped offline", "@3 y c: [] ",
                "@3 x a stopped offline", "@3 x b: [] "
            ])
        #expect(h.engine.membershipCount == 4)
    }

    @Test("the typer's own view leaves them out, so stopping changes nothing for them")
    func selfExcluded() {
        var h = Harness()
        h.join("g", "a", "b", "c")
        h.type("g", "a", at: 1)
        #expect(
            h.type("g", "b", at: 2) == [
                "@2 g a: [b] B is typing...",
                "@2 g c: [a,b] A and B are typing..."
            ])
        #expect(
            h.run(.send(conv: ID("g"), user: ID("b")), at: 3) == [
                "@3 g a: [] ",
                "@3 g c: [a] A is typing..."
            ])
    }

    @Test("a member who arrives while others type gets one event; in a quiet room none")
    func lateJoiner() {
        var h = Harness()
        h.join("g", "a", "b")
        #expect(h.run(.join(conv: ID("g"), user: ID("z"), name: "Zed")) == [])
        h.type("g", "a", at: 5)
        #expect(h.run(.join(conv: ID("g"), user: ID("y"), name: nil)) == ["@5 g y: [a] A is typing..."])
        #expect(h.run(.join(conv: ID("g"), user: ID("y"), name: nil)) == [], "joining again is harmless")
    }

    @Test("a user whose ids differ only in Unicode normalization is another user")
    func byteExactIDs() {
        var h = Harness()
        h.run(.join(conv: ID("g"), user: ID("\u{E9}"), name: "Precomposed"))
        h.run(.join(conv: ID("g"), user: ID("e\u{301}"), name: "Decomposed"))
        #expect(h.engine.membershipCount == 2)
        #expect(h.type("g", "\u{E9}", at: 1) == ["@1 g e\u{301}: [\u{E9}] Precomposed is typing..."])
    }

    @Test("timeouts of streaks in several conversations fire in deadline order")
    func timeoutsAcrossConversations() {
        var h = Harness()
        h.join("x", "a", "b")
        h.join("y", "c", "d")
        h.type("y", "c", at: 100)
        h.type("x", "a", at: 50)
        h.type("x", "a", at: 200)
        #expect(h.drain() == ["@3100 y d: [] ", "@3200 x b: [] "])
        #expect(h.engine.now == 3200)
    }

    @Test("when everyone in a room types, each typer's view costs O(1): derived from one shared view")
    func personalViewsShareTheirBase() {
        var h = Harness()
        let count = 120
        for n in 0..<count { h.join("g", "u\(n)") }
        for n in 0..<count { h.type("g", "u\(n)", at: n) }
        let record = h.engine.conversations[h.engine.findConversation(ID("g"))!]
        let bases = Set(record.members.compactMap { $0.lastSent.base.map(ObjectIdentifier.init) })
        let ownViews = record.members.filter { $0.lastSent.base == nil && $0.lastSent !== record.main.fullView }
        #expect(
            ownViews.count <= 1,
            "typers hold derived views (the last to start may keep the shared view it saw before)")
        #expect(bases.count <= 2, "all derived from the same shared view (\(bases.count) bases)")
        let last = record.members[count - 1].lastSent
        #expect(last.typerCount == count - 1 && last.typing.first == ID("u0"))
        #expect(h.type("g", "u5", at: 400) == [], "a keystroke that changes nothing writes nothing")
    }
}
