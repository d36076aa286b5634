import Testing
import TypingCore

/// Views and audiences: who is sent indicators under `--audience open`, opening and
/// closing views, and what open views cost: closing one of many and going offline
/// touch only the views concerned, and closed views give their memory back. Their
/// speed is measured in bench/ (views.py, offline.py); these check the structures.
@Suite("Views and audiences")
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
        #expect(
            h.run(.open(conv: ID("g"), user: ID("b")), at: 5) == ["@5 g b: [a,c] A and C are typing..."],
            "compared from the empty indicator again")
        #expect(
            h.run(.query(conv: ID("g"))) == ["state g members=[\"a\", \"b\", \"c\"] open=[\"b\"] typing=[\"a\", \"c\"]"]
        )
    }

    @Test("with nobody watching under --audience open, stops build no view, and the view is right when one opens")
    func nobodyWatching() {
        var h = Harness(EngineConfiguration(audience: .open))
        h.join("g", "a", "b", "c")
        h.type("g", "a", at: 1)
        h.type("g", "b", at: 2)
        let c = h.engine.findConversation(ID("g"))!
        #expect(h.engine.conversations[c].main.fullViewIsStale)
        #expect(h.engine.conversations[c].main.fullView === IndicatorView.empty, "no view was built")
        #expect(h.run(.open(conv: ID("g"), user: ID("c")), at: 3) == ["@3 g c: [a,b] A and B are typing..."])
        #expect(h.run(.open(conv: ID("g"), user: ID("a")), at: 4) == ["@4 g a: [b] B is typing..."])
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

    @Test("closing one of many views and going offline touch only the views concerned")
    func openViewSets() {
        var h = Harness(EngineConfiguration(audience: .open), checksEveryStep: false)
        for index in 0..<500 {
            h.join("c\(index)", "a", "b")
            h.run(.open(conv: ID("c\(index)"), user: ID("a")))
        }
        let a = h.engine.findUser(ID("a"))!
        #expect(h.engine.openViews[user: a]?.count == 500)
        h.run(.close(conv: ID("c250"), user: ID("a")))
        #expect(h.engine.openViews[user: a]?.contains(h.engine.findConversation(ID("c250"))!) == false)
        #expect(h.engine.openViews[user: a]?.count == 499)
        h.engine.checkInvariants()
        h.run(.offline(user: ID("a")))
        #expect(h.engine.openViews[user: a] == nil)
        h.engine.checkInvariants()
    }

    @Test("views opened and closed give their memory back")
    func viewMemory() {
        var h = Harness(EngineConfiguration(audience: .open), checksEveryStep: false)
        for index in 0..<3000 {
            h.join("c\(index)", "u\(index)", "v\(index)")
            h.run(.open(conv: ID("c\(index)"), user: ID("u\(index)")))
        }
        #expect(h.engine.openViews.byUser.count == 3000)
        #expect(h.engine.openViewCount == 3000, "counted in the footprint that decides when typingd trims")
        for index in 0..<3000 { h.run(.close(conv: ID("c\(index)"), user: ID("u\(index)"))) }
        #expect(h.engine.openViewCount == 0)
        #expect(
            h.engine.openViews.byUser.storage.capacity < 512,
            "the table shrank: \(h.engine.openViews.byUser.storage.capacity)")
        h.engine.conversations.forEachLive { _, record in
            #expect(record.openSlots.storedEntries == 0)
        }
        h.engine.checkInvariants()
    }
}
