import Testing
import TypingCore

/// What a user's settings change: with `send_typing` false their streaks stop and
/// keystrokes start none; with `receive_typing` false they are sent no indicators.
@Suite("User settings")
struct UserSettingsTests {
    @Test("send_typing false: streaks stop as hidden, keystrokes start none; the setting goes with the user")
    func hiddenTyping() {
        var h = Harness(EngineConfiguration(typingEvents: true))
        h.join("g", "a", "b")
        h.join("h", "a", "c")
        h.type("h", "a", at: 1)
        h.type("g", "a", at: 2)
        #expect(
            h.run(.join(conv: ID("g"), user: ID("a"), sendTyping: false), at: 3) == [
                "@3 h a stopped hidden", "@3 h c: [] ", "@3 g a stopped hidden", "@3 g b: [] "
            ], "other conversations first, in streak order, then the join's own")
        #expect(h.type("g", "a", at: 4) == [] && h.type("g", "a", at: 5, empty: true) == [])
        h.run(.leave(conv: ID("g"), user: ID("a")))
        h.run(.leave(conv: ID("h"), user: ID("a")))
        h.join("g", "a")
        #expect(h.type("g", "a", at: 6).first == "@6 g a started", "a user with no membership left is forgotten")
    }

    @Test(
        "receive_typing false: no indicators, what was sent is forgotten; true again: compared from the empty indicator"
    )
    func notSeeingTyping() {
        var h = Harness()
        h.join("g", "ann", "bob")
        h.type("g", "bob", at: 1)
        #expect(h.run(.user(user: ID("ann"), receiveTyping: false), at: 2).isEmpty)
        #expect(h.engine.conversations[h.engine.findConversation(ID("g"))!].members[0].lastSent === IndicatorView.empty)
        #expect(h.run(.send(conv: ID("g"), user: ID("bob")), at: 3).isEmpty)
        h.type("g", "bob", at: 4)
        #expect(h.run(.user(user: ID("ann"), receiveTyping: true), at: 5) == ["@5 g ann: [bob] Bob is typing..."])
        #expect(h.run(.user(user: ID("ann"), receiveTyping: true), at: 6).isEmpty, "no change, no visit")
    }
}
