import Testing
import TypingCore

/// Protocol v2 in the engine: views, order, unnamed typers, settings, timeouts per
/// keystroke, bounded output. The harness checks the invariants after every step.
@Suite("Protocol v2 in the engine")
struct ViewTests {
    static let open = EngineConfiguration(audience: .open)

    @Test("under --audience open only open views get indicators; opening shows the current one at once")
    func audienceOpen() {
        var h = Harness(Self.open)
        h.join("g", "a", "b", "c")
        #expect(h.type("g", "a", at: 1) == [], "nobody is looking")
        #expect(h.run(.open(conv: ID("g"), user: ID("b")), at: 2) == ["@2 g b: [a] A is typing..."])
        #expect(h.run(.open(conv: ID("g"), user: ID("b"))) == [], "opening an open view is a no-op")
        #expect(h.run(.close(conv: ID("g"), user: ID("b")), at: 3) == [], "closing writes nothing")
        #expect(h.type("g", "c", at: 4) == [], "b's screen is gone")
        #expect(h.run(.open(conv: ID("g"), user: ID("b")), at: 5) == ["@5 g b: [a,c] A and C are typing..."],
                "compared from the empty indicator again")
        #expect(h.run(.query(conv: ID("g"))) == ["state g members=[\"a\", \"b\", \"c\"] open=[\"b\"] typing=[\"a\", \"c\"]"])
    }

    @Test("close stops the closer's streak with reason closed, open or not; the others see it")
    func closeStopsTyping() {
        var h = Harness(EngineConfiguration(typingEvents: true))
        h.join("g", "a", "b")
        h.type("g", "a", at: 1)
        #expect(h.run(.close(conv: ID("g"), user: ID("a")), at: 2) == ["@2 g a stopped closed", "@2 g b: [] "])
        #expect(h.run(.close(conv: ID("g"), user: ID("zed"))) == ["error 5 not_member"])
        #expect(h.run(.open(conv: ID("nope"), user: ID("a"))) == ["error 6 not_member"])
    }

    @Test("views closed in any order keep the user's list of open views exact (swap-remove)")
    func openViewBookkeeping() {
        var h = Harness(Self.open)
        for conv in ["x", "y", "z", "w"] { h.join(conv, "a", "b") }
        for conv in ["x", "y", "z", "w"] { h.run(.open(conv: ID(conv), user: ID("a"))) }
        h.run(.close(conv: ID("y"), user: ID("a")))
        h.run(.leave(conv: ID("x"), user: ID("a")))
        h.run(.open(conv: ID("y"), user: ID("a")))
        #expect(h.engine.openViews[user: h.engine.findUser(ID("a"))!]?.count == 3)
        h.run(.offline(user: ID("a")))
        #expect(h.engine.openViews[user: h.engine.findUser(ID("a"))!] == nil, "offline closes every view")
        #expect(h.engine.membershipCount == 7, "and keeps every membership")
    }

    @Test("open views survive the compaction of a big room's member slots")
    func compactionKeepsOpenViews() {
        var h = Harness(Self.open)
        for n in 0..<60 { h.join("big", "u\(n)") }
        for n in stride(from: 1, to: 60, by: 7) { h.run(.open(conv: ID("big"), user: ID("u\(n)"))) }
        for n in 0..<60 where n % 7 != 1 && n % 3 != 0 { h.run(.leave(conv: ID("big"), user: ID("u\(n)"))) }
        let shown = h.type("big", "u0", at: 1)
        #expect(shown == stride(from: 1, to: 60, by: 7).map { "@1 big u\($0): [u0] U0 is typing..." })
    }

    @Test("--order name sorts by display name bytes, then id; a rename moves the typer")
    func orderName() {
        var h = Harness(EngineConfiguration(order: .name))
        h.run(.join(conv: ID("g"), user: ID("v"), name: "Vic"))
        for (user, name) in [("u1", "zed"), ("u2", "Zed"), ("u3", "Émile"), ("u4", "Zed")] {
            h.run(.join(conv: ID("g"), user: ID(user), name: name))
            h.type("g", user, at: 1)
        }
        h.run(.join(conv: ID("g"), user: ID("u5")))
        h.type("g", "u5", at: 2)
        #expect(h.run(.query(conv: ID("g"))).first?.hasSuffix("typing=[\"u2\", \"u4\", \"u1\", \"u3\", \"u5\"]") == true,
                "Zed, Zed (by id), zed, Émile (U+00C9 sorts after ASCII), then the unnamed")
        #expect(h.run(.user(user: ID("u3"), name: "Aaron"), at: 3).first == "@3 g v: [u3,u2,u4,u1,u5] Aaron, Zed, and 3 others are typing...")
    }

    @Test("--order recent: a keystroke moves its typer to the front of their group, and writes only what is seen")
    func orderRecent() {
        var h = Harness(EngineConfiguration(order: .recent, maxListed: 1))
        h.run(.join(conv: ID("g"), user: ID("v"), name: "V"))
        for n in 1...3 { h.run(.join(conv: ID("g"), user: ID("n\(n)"), name: "N\(n)")) }
        for n in 1...3 { h.run(.join(conv: ID("g"), user: ID("x\(n)"))) }
        for (time, user) in ["n1", "n2", "n3", "x1", "x2", "x3"].enumerated() { h.type("g", user, at: time) }
        // Named group: n3 n2 n1; unnamed group: x3 x2 x1 (positions 3, 4, 5).
        #expect(h.type("g", "x1", at: 10) == [], "beyond every listed id and shown name: no render")
        #expect(h.run(.query(conv: ID("g"))).first?.hasSuffix("typing=[\"n3\", \"n2\", \"n1\", \"x1\", \"x3\", \"x2\"]") == true)
        #expect(h.type("g", "n1", at: 11).first == "@11 g v: [n1] more 5 N1, N3, and 4 others are typing...")
    }

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

    @Test("send_typing false: streaks stop as hidden, keystrokes start none; the setting goes with the user")
    func hiddenTyping() {
        var h = Harness(EngineConfiguration(typingEvents: true))
        h.join("g", "a", "b")
        h.join("h", "a", "c")
        h.type("h", "a", at: 1)
        h.type("g", "a", at: 2)
        #expect(h.run(.join(conv: ID("g"), user: ID("a"), sendTyping: false), at: 3) == [
            "@3 h a stopped hidden", "@3 h c: [] ", "@3 g a stopped hidden", "@3 g b: [] ",
        ], "other conversations first, in streak order, then the join's own")
        #expect(h.type("g", "a", at: 4) == [] && h.type("g", "a", at: 5, empty: true) == [])
        h.run(.leave(conv: ID("g"), user: ID("a")))
        h.run(.leave(conv: ID("h"), user: ID("a")))
        h.join("g", "a")
        #expect(h.type("g", "a", at: 6).first == "@6 g a started", "a user with no membership left is forgotten")
    }

    @Test("the view of a typer beyond the listed ids lists the first ones and counts the rest")
    func typerBeyondTheList() {
        var h = Harness(EngineConfiguration(maxListed: 2))
        h.join("g", "a", "b", "c", "d", "v")
        for (time, user) in ["a", "b", "c", "d"].enumerated() { h.type("g", user, at: time) }
        let record = h.engine.conversations[h.engine.findConversation(ID("g"))!]
        let d = record.members[record.slot(of: h.engine.findUser(ID("d"))!)!].lastSent
        #expect(d.typing == [ID("a"), ID("b")] && d.more == 1 && d.text == "A, B, and C are typing...")
        let b = record.members[record.slot(of: h.engine.findUser(ID("b"))!)!].lastSent
        #expect(b.typing == [ID("a"), ID("c")] && b.more == 1)
    }
}
