import Testing
import TypingCore

/// The typers a viewer is told about: in the order `--order` gives (start, recent,
/// name), the first `--max-listed` of them by id and the rest counted, and a render
/// that reads only the first of them (bench/typers.py measures it).
@Suite("Order and list of typers")
struct TyperListTests {
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
        #expect(
            h.run(.query(conv: ID("g"))).first?.hasSuffix("typing=[\"u2\", \"u4\", \"u1\", \"u3\", \"u5\"]") == true,
            "Zed, Zed (by id), zed, Émile (U+00C9 sorts after ASCII), then the unnamed")
        #expect(
            h.run(.user(user: ID("u3"), name: "Aaron"), at: 3).first
                == "@3 g v: [u3,u2,u4,u1,u5] Aaron, Zed, and 3 others are typing...")
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
        #expect(
            h.run(.query(conv: ID("g"))).first?.hasSuffix("typing=[\"n3\", \"n2\", \"n1\", \"x1\", \"x3\", \"x2\"]")
                == true)
        #expect(h.type("g", "n1", at: 11).first == "@11 g v: [n1] more 5 N1, N3, and 4 others are typing...")
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

    @Test(
        "typers are kept in a tree: start, recent and name order agree with a sorted list, and a render reads only the first of them",
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
}
