import Testing
import TypingCore

/// Announcements for screen readers: a screen's sentence, once it has stayed the
/// same for `--announce-after-ms`, written once (Protocol.md#announcements-for-screen-readers).
@Suite("Announcements")
struct AnnouncementTests {
    static func room(_ configuration: EngineConfiguration = EngineConfiguration(announceAfter: 1_000)) -> Harness {
        var h = Harness(configuration)
        h.join("dev", "ana", "ben", "cy")
        return h
    }

    @Test(
        "a sentence that stays is announced once; one that flickers is announced when it settles; the same one again is not"
    )
    func settles() {
        var h = Self.room()
        h.type("dev", "ben", at: 0)
        h.type("dev", "cy", at: 500)
        // ana's sentence changed at 500: her announcement moved to 1500; cy's (Ben)
        // is due at 1000.
        #expect(h.run(.tick, at: 1_000) == ["announce @1000 dev cy: Ben is typing..."])
        #expect(
            h.run(.tick, at: 1_500) == [
                "announce @1500 dev ana: Ben and Cy are typing...",
                "announce @1500 dev ben: Cy is typing..."
            ])
        // A keystroke that changes no screen schedules nothing.
        h.type("dev", "ben", at: 1_600)
        #expect(h.run(.tick, at: 2_700) == [])
        #expect(h.engine.announcements.pendingCount == 0)
    }

    @Test("the empty indicator cancels and forgets: the same sentence later is announced again")
    func emptyCancels() {
        var h = Self.room()
        h.type("dev", "ben", at: 0)
        #expect(
            h.run(.tick, at: 1_000) == [
                "announce @1000 dev ana: Ben is typing...", "announce @1000 dev cy: Ben is typing..."
            ])
        h.run(.send(conv: ID("dev"), user: ID("ben")), at: 1_100)
        h.type("dev", "ben", at: 1_200)
        // ana was sent the empty indicator, then "Ben is typing..." again.
        #expect(
            h.run(.tick, at: 2_200) == [
                "announce @2200 dev ana: Ben is typing...", "announce @2200 dev cy: Ben is typing..."
            ])
    }

    @Test("a sentence that changes and comes back before it settles is not announced again")
    func sameAsLastAnnounced() {
        var h = Self.room()
        h.type("dev", "ben", at: 0)
        h.run(.tick, at: 1_000)
        h.type("dev", "cy", at: 1_100)
        h.run(.send(conv: ID("dev"), user: ID("cy")), at: 1_200)
        // ana: "Ben and Cy", then "Ben" again, which she last announced; ben was
        // sent "Cy", then the empty indicator, which cancelled it.
        #expect(h.run(.tick, at: 2_500) == [])
    }

    @Test(
        "a sentence that differs from the last announced one only in its bytes (a name in NFC, then NFD) is announced")
    func comparedAsBytes() {
        // Its indicator was written, being another text; so is its announcement
        // (found by ReferenceModelV4Tests: String's == held them equal).
        var h = Self.room()
        h.run(.user(user: ID("ben"), name: "Zo\u{EB}"), at: 0)
        h.type("dev", "ben", at: 0)
        let nfc = "Zo\u{EB} is typing...", nfd = "Zoe\u{308} is typing..."
        let bytes = { (lines: [String]) in lines.map { Array($0.utf8) } }
        #expect(
            bytes(h.run(.tick, at: 1_000)) == bytes(["announce @1000 dev ana: \(nfc)", "announce @1000 dev cy: \(nfc)"])
        )
        #expect(
            bytes(h.run(.user(user: ID("ben"), name: "Zoe\u{308}"), at: 1_100))
                == bytes(["@1100 dev ana: [ben] \(nfd)", "@1100 dev cy: [ben] \(nfd)"]))
        #expect(
            bytes(h.run(.tick, at: 2_100)) == bytes(["announce @2100 dev ana: \(nfd)", "announce @2100 dev cy: \(nfd)"])
        )
    }

    @Test(
        "a forgotten screen loses its pending announcement and what it announced; side panes and list rows carry their keys"
    )
    func forgottenAndPanes() {
        var h = Self.room()
        h.run(.open(conv: ID("dev"), user: ID("ana"), thread: ID("t"), pane: .side), at: 0)
        h.run(.open(conv: ID("dev"), user: ID("cy"), view: .list), at: 0)
        h.run(.type(conv: ID("dev"), user: ID("ben"), thread: ID("t")), at: 10)
        h.type("dev", "ana", at: 20)
        #expect(
            h.run(.tick, at: 1_020) == [
                "announce @1010 dev#t ana(side): Ben is typing...",
                "announce @1020 dev ben: Ana is typing...",
                "announce @1020 dev cy(list): Ana is typing..."
            ])
        // receive_typing off forgets both of ben's screens; on again, he is told and
        // announced again.
        h.run(.user(user: ID("ben"), receiveTyping: false), at: 1_100)
        h.run(.user(user: ID("ben"), receiveTyping: true), at: 1_200)
        #expect(h.run(.tick, at: 2_200) == ["announce @2200 dev ben: Ana is typing..."])
        // Removing the side pane drops its pending announcement.
        h.run(.type(conv: ID("dev"), user: ID("cy"), thread: ID("t")), at: 2_300)
        h.run(.close(conv: ID("dev"), user: ID("ana"), pane: .side), at: 2_400)
        #expect(!h.run(.tick, at: 3_400).contains { $0.contains("ana(side)") })
    }

    @Test("timeouts fire before announcements due at the same time; draining fires the rest")
    func timing() {
        var h = Harness(EngineConfiguration(timeout: 1_000, announceAfter: 1_000))
        h.join("dm", "ana", "ben")
        h.type("dm", "ana", at: 0)
        // ben's announcement and ana's timeout are both due at 1000: the timeout
        // first, whose empty indicator cancels the announcement.
        #expect(h.run(.tick, at: 1_000) == ["@1000 dm ben: [] "])
        h.type("dm", "ana", at: 1_100)
        #expect(h.drain() == ["@2100 dm ben: [] "], "the timeout at 2100 comes first, and cancels")
        h.run(.type(conv: ID("dm"), user: ID("ana"), timeout: 5_000), at: 3_000)
        #expect(h.drain() == ["announce @4000 dm ben: Ana is typing...", "@8000 dm ben: [] "])
    }

    @Test("a leave forgets the member's screens; a hushed room announces nothing")
    func leaveAndQuiet() {
        var h = Harness(EngineConfiguration(quietAbove: 3, announceAfter: 1_000))
        h.join("dev", "ana", "ben", "cy")
        h.type("dev", "ben", at: 0)
        h.run(.leave(conv: ID("dev"), user: ID("cy")), at: 10)
        h.run(.join(conv: ID("dev"), user: ID("cy")), at: 20)
        h.run(.join(conv: ID("dev"), user: ID("dee")), at: 30)
        #expect(h.run(.tick, at: 5_000).allSatisfy { !$0.hasPrefix("announce") })
        #expect(h.engine.announcements.pendingCount == 0)
    }

    @Test(
        "a hand-sent restore of another text than the screen shows, without announce_at: the screen keeps its sentence unannounced, and the engine is sound"
    )
    func restoreAnotherText() {
        // Ana shows "Ben is typing..."; the restore says she last announced Cy's
        // sentence and has nothing pending, so she does not announce Ben's. The
        // invariant checker took that screen for a broken one: only a restore of
        // nothing (`"announced":""`) was its exception.
        var h = Harness(EngineConfiguration(announceAfter: 1_000), checksEveryStep: false)
        h.join("dev", "ana", "ben", "cy")
        h.type("dev", "ben", at: 0)
        h.run(.restore(conv: ID("dev"), user: ID("ana"), announced: "Cy is typing..."), at: 10)
        #expect(h.engine.invariantViolations().isEmpty, "\(h.engine.invariantViolations())")
        #expect(h.run(.tick, at: 1_000) == ["announce @1000 dev cy: Ben is typing..."])
        #expect(h.engine.invariantViolations().isEmpty, "\(h.engine.invariantViolations())")
    }
}
