import Testing
import TypingCore

/// The engine's findings of the v2 attack (issue 16): each test fails on the engine
/// before its fix. Speed is measured in bench/ (offline.py, typers.py); these check
/// the structures.
@Suite("Engine findings D2, D3, D6, D9, D11")
struct TimeoutTests {
    @Test("D2: closing one of many views and going offline touch only the views concerned")
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

    @Test("D3: typers are kept in a tree: start, recent and name order agree with a sorted list, and a render reads only the first of them",
          arguments: [EngineConfiguration.Order.start, .recent, .name])
    func typerTree(order: EngineConfiguration.Order) {
        var h = Harness(EngineConfiguration(audience: .open, order: order, maxListed: 3), checksEveryStep: false)
        let users = (0..<300).map { "u\(($0 * 37) % 300)" }
        for user in users { h.run(.join(conv: ID("g"), user: ID(user), name: user.hasSuffix("7") ? nil : "N" + user)) }
        h.run(.open(conv: ID("g"), user: ID("u1")))
        var at = 0
        for round in 0..<3 {
            for user in users where (user.count + round) % 2 == 0 || round == 0 {
                at += 1
                h.type("g", user, at: at)
            }
            h.engine.checkInvariants()
        }
        let c = h.engine.findConversation(ID("g"))!
        #expect(h.engine.conversations[c].main.typers.count(in: h.engine.streaks) == 300)
        #expect(h.engine.renderHeads[0].count == 4, "a render collects max(listed + 1, 4) typers, not all 299")
        for user in users.prefix(150) { h.run(.send(conv: ID("g"), user: ID(user)), at: at) }
        h.engine.checkInvariants()
        _ = h.drain()
    }

    @Test("D3: with nobody watching under --audience open, stops build no view, and the view is right when one opens")
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

    @Test("D6: keystrokes with ever earlier deadlines keep the timer queue bounded")
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

    @Test("D9: views opened and closed give their memory back")
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
        #expect(h.engine.openViews.byUser.storage.capacity < 512, "the table shrank: \(h.engine.openViews.byUser.storage.capacity)")
        h.engine.conversations.forEachLive { _, record in
            #expect(record.openSlots.capacity == 0)
        }
        h.engine.checkInvariants()
    }

    @Test("D11: a keystroke at the end of time times out at the next command; snapshot lists no streak due now")
    func endOfTime() {
        var h = Harness(EngineConfiguration(typingEvents: true))
        h.join("g", "a", "b")
        #expect(h.type("g", "a", at: Engine.maxTime) == ["@\(Engine.maxTime) g a started", "@\(Engine.maxTime) g b: [a] A is typing..."])
        let snapshot = h.run(.snapshot)
        #expect(snapshot.first == "@\(Engine.maxTime) g a stopped timeout", "\(snapshot)")
        #expect(!snapshot.contains { $0.hasPrefix("streak") }, "\(snapshot)")
        #expect(snapshot.last == "snapshot conversations=1 members=2 typing=0")
    }
}
