import Testing
import TypingCore

@Suite("Membership, names, replies and limits")
struct EngineMembershipTests {
    @Test("type, send, leave and remove need membership; remove's by must be a member too")
    func notMember() {
        var h = Harness()
        h.join("g", "a", "b")
        #expect(h.type("g", "z") == ["error 3 not_member"])
        #expect(h.type("nowhere", "a") == ["error 4 not_member"])
        #expect(h.run(.send(conv: ID("g"), user: ID("z"))) == ["error 5 not_member"])
        #expect(h.run(.leave(conv: ID("x"), user: ID("a"))) == ["error 6 not_member"])
        #expect(h.run(.remove(conv: ID("g"), user: ID("a"), by: ID("z"))) == ["error 7 not_member"])
        #expect(h.engine.membershipCount == 2, "a refused command changes nothing")
        #expect(h.run(.remove(conv: ID("g"), user: ID("a"), by: ID("a")), id: .integer(1)) == ["ok 8"])
        #expect(h.type("g", "a") == ["error 9 not_member"], "a removed user is no longer a member")
        h.join("g", "a")
        #expect(h.type("g", "a", at: 1) == ["@1 g b: [a] A is typing..."], "a removed user may join again")
    }

    @Test("the last member to leave frees the conversation, and users without memberships go")
    func forgetting() {
        var h = Harness()
        h.join("g", "a", "b")
        h.type("g", "a", at: 1)
        h.run(.leave(conv: ID("g"), user: ID("a")))
        h.run(.leave(conv: ID("g"), user: ID("b")))
        #expect(h.engine.conversationCount == 0)
        #expect(h.engine.membershipCount == 0)
        #expect(h.engine.conversationIndex.count == 0 && h.engine.userIndex.count == 0)
        #expect(h.run(.query(conv: ID("g"))) == ["state g members=[] typing=[]"])
        h.run(.join(conv: ID("g"), user: ID("a"), name: nil))
        h.join("g", "b")
        #expect(h.type("g", "b", at: 2) == ["@2 g a: [b] B is typing..."])
        #expect(
            h.type("g", "a", at: 3) == ["@3 g b: [a] Someone is typing..."],
            "a user who left everywhere is forgotten, name included")
    }

    @Test("a re-join goes to the end of the join order; leaving vacates a slot")
    func joinOrder() {
        var h = Harness()
        h.join("g", "a", "b", "c")
        h.run(.leave(conv: ID("g"), user: ID("a")))
        h.join("g", "a")
        #expect(h.run(.query(conv: ID("g"))) == ["state g members=[\"b\", \"c\", \"a\"] typing=[]"])
        #expect(h.type("g", "b", at: 1) == ["@1 g c: [b] B is typing...", "@1 g a: [b] B is typing..."])
    }

    @Test("join order survives the compaction of many vacant slots")
    func compaction() {
        var h = Harness()
        let users = (0..<40).map { "u\($0)" }
        for user in users { h.join("g", user) }
        for number in 0..<36 where number % 3 != 0 {
            h.run(.leave(conv: ID("g"), user: ID("u\(number)")))
        }
        let expected = (0..<40).filter { $0 % 3 == 0 || $0 >= 36 }.map { "u\($0)" }
        let members = h.engine.conversations[h.engine.findConversation(ID("g"))!].members
        #expect(members.count < 40, "vacant slots were compacted")
        #expect(h.run(.query(conv: ID("g"))) == ["state g members=\(expected) typing=[]"])
        #expect(h.run(.leave(conv: ID("g"), user: ID("u39"))) == [], "memberships still point at the right slots")
        #expect(h.type("g", "u0", at: 1).count == expected.count - 2)
    }

    @Test("a rename re-renders the other conversations the user types in, in streak order, then the join's own")
    func rename() {
        var h = Harness()
        h.join("x", "a", "b")
        h.join("y", "a", "c")
        h.join("z", "a", "d")
        h.type("y", "a", at: 1)
        h.type("x", "a", at: 2)
        #expect(
            h.run(.join(conv: ID("z"), user: ID("a"), name: "Ann"), at: 3) == [
                "@3 y c: [a] Ann is typing...",
                "@3 x b: [a] Ann is typing..."
            ])
        #expect(
            h.run(.join(conv: ID("x"), user: ID("a"), name: "  Ann\u{7}  ")) == [],
            "a name with the same display name changes nothing")
        #expect(
            h.run(.join(conv: ID("x"), user: ID("a"), name: "Bea"), at: 4) == [
                "@4 y c: [a] Bea is typing...",
                "@4 x b: [a] Bea is typing..."
            ], "the join's own conversation comes last")
    }

    @Test("a rename hidden behind 'and 2 others' still reaches the typers who see it")
    func renameOfThirdTyper() {
        var h = Harness()
        h.join("g", "a", "b", "c", "d", "v")
        for (time, user) in ["a", "b", "c", "d"].enumerated() { h.type("g", user, at: time) }
        #expect(
            h.run(.join(conv: ID("g"), user: ID("c"), name: "Cy"), at: 10) == [
                "@10 g a: [b,c,d] B, Cy, and D are typing...",
                "@10 g b: [a,c,d] A, Cy, and D are typing...",
                "@10 g d: [a,b,c] A, B, and Cy are typing..."
            ], "v and c see 'A, B, and 2 others' / their own view, unchanged")
    }

    @Test("ids get an ok after every other event; query and stats carry the id in the reply")
    func acknowledgements() {
        var h = Harness()
        #expect(h.run(.join(conv: ID("g"), user: ID("a"), name: nil), id: .string("j")) == ["ok 1"])
        h.join("g", "b")
        #expect(
            h.run(.type(conv: ID("g"), user: ID("a"), empty: false), at: 7, id: .integer(-3))
                == ["@7 g b: [a] Someone is typing...", "ok 3"])
        var events: [Event] = []
        h.engine.apply(Request(.query(conv: ID("g")), id: .string("q"), line: 4), to: &events)
        #expect(
            events == [
                .state(
                    Event.State(
                        at: 7, id: .string("q"), conv: ID("g"),
                        members: [ID("a"), ID("b")], open: [], typing: [ID("a")]))
            ])
        h.line = 4
        #expect(h.run(.tick, at: 8, id: .integer(9)) == ["ok 5"])
    }

    @Test("time never goes back, and a refused line has no effect at all")
    func timeBackwards() {
        var h = Harness()
        h.join("g", "a", "b")
        h.type("g", "a", at: 100)
        #expect(h.run(.tick, at: 99) == ["error 4 time_backwards"])
        #expect(h.engine.now == 100)
        #expect(
            h.type("g", "z", at: 5000) == ["@3100 g b: [] ", "error 5 not_member"],
            "the clock advances before membership is checked")
    }

    @Test("--late-at clamp applies a late command at the current time; a bad at is still refused")
    func lateAtClamp() {
        var h = Harness(EngineConfiguration(lateAt: .clamp))
        h.join("g", "a", "b")
        h.type("g", "a", at: 100)
        #expect(h.run(.tick, at: 99, id: .integer(1)) == ["ok 4"])
        #expect(h.engine.now == 100, "time still never goes back")
        #expect(h.type("g", "b", at: 50) == ["@100 g a: [b] B is typing..."], "applied at 100, so its deadline is 3100")
        #expect(h.run(.tick, at: 3099) == [])
        #expect(h.run(.tick, at: 3100).count == 2, "a's streak (deadline 3100) ended; b's too, at 3100")
        #expect(h.run(.tick, at: -1) == ["error 8 bad_field"])
        #expect(h.run(.tick, at: Engine.maxTime + 1) == ["error 9 bad_field"])
    }

    @Test("stats counts lines, applied commands, errors, live state and earlier events")
    func stats() {
        var h = Harness()
        h.join("g", "a", "b")
        h.type("g", "a", at: 1)
        h.type("g", "z")
        var ignored: [Event] = []
        h.engine.reject(Event.Error(line: 5, code: .badJSON, message: "bad"), to: &ignored)
        h.line = 9
        #expect(h.run(.stats) == ["stats lines=10 commands=4 errors=2 conversations=1 members=2 typing=1 events=3"])
    }

    @Test("a join past --max-members or --max-memberships is refused and changes nothing")
    func limits() {
        var h = Harness(EngineConfiguration(maxMembers: 2, maxMemberships: 3))
        h.join("g", "a", "b")
        #expect(h.run(.join(conv: ID("g"), user: ID("c"), name: "C")) == ["error 3 limit"])
        #expect(h.run(.join(conv: ID("g"), user: ID("a"), name: "Al")) == [], "a member may join again")
        h.join("h", "c")
        #expect(h.run(.join(conv: ID("i"), user: ID("a"), name: "Zz")) == ["error 6 limit"])
        #expect(h.engine.conversationCount == 2, "no conversation was created")
        #expect(
            h.type("g", "a", at: 1) == ["@1 g b: [a] Al is typing..."],
            "the refused join set no name: a is still Al")
    }

    @Test("a join that would create a conversation past --max-conversations is refused; joining an existing one is not")
    func conversationLimit() {
        var h = Harness(EngineConfiguration(maxConversations: 2))
        h.join("a", "x")
        h.join("b", "x")
        #expect(h.run(.join(conv: ID("c"), user: ID("y"), name: "Y")) == ["error 3 limit"])
        #expect(h.engine.conversationCount == 2 && h.engine.membershipCount == 2, "nothing half-applied")
        #expect(h.engine.findUser(ID("y")) == nil, "not even the user")
        h.join("a", "y")
        #expect(h.engine.membershipCount == 3)
        h.run(.leave(conv: ID("b"), user: ID("x")))
        #expect(h.run(.join(conv: ID("c"), user: ID("y"), name: nil)) == [], "room again once one is gone")
    }
}
