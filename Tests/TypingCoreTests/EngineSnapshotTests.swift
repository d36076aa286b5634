import Testing
import TypingCore
import TypingTestSupport

@Suite("Snapshots")
struct EngineSnapshotTests {
    /// The `member` and `snapshot` events a snapshot writes.
    static func snapshot(_ h: inout Harness) -> [String] {
        h.run(.snapshot).filter { !$0.hasPrefix("ok") }
    }

    /// What a snapshot says, whatever order the engine stores conversations in:
    /// each conversation's events (members in join order, streaks in the order they
    /// began), conversations sorted by id, without the `joined` and `started` ranks
    /// (which depend on that storage order).
    static func content(_ h: inout Harness) -> [String] {
        var byConversation: [String: [String]] = [:]
        for line in snapshot(&h) where !line.hasPrefix("snapshot") {
            let words = line.split(separator: " ")
            let conv = words[1].split(separator: "#")[0]
            let kept = words.filter { !$0.hasPrefix("joined=") && !$0.hasPrefix("started=") }.joined(separator: " ")
            byConversation[String(conv), default: []].append(kept)
        }
        return byConversation.keys.sorted().flatMap { byConversation[$0] ?? [] }
    }

    /// Rebuilds an engine from snapshot events, as Protocol.md says: `join` (and
    /// `open`) per member; a `type` per streak in the order listed, then again in
    /// the order of `keystroke`, each with `timeout_ms` = deadline − at. The `join`
    /// also with `locale` and `receive_typing`, the `open` with `thread` and `view`,
    /// the `type` with `thread` and `activity`; then a `forget` for each
    /// forgotten member, which forgets what they were sent without an event and
    /// renders nothing (a `close` would tell them what they see: every command
    /// naming a conversation renders it).
    /// Last, with `--announce-after-ms`, a `restore` per screen with announcement
    /// keys (`restoring: false` leaves it out, to show what it is for).
    static func rebuild(from events: [Event], into rebuilt: inout Harness, restoring: Bool = true) {
        var streaks: [Event.Streak] = []
        var members: [Event.Member] = []
        var forgotten: [Event.Member] = []
        for event in events {
            switch event {
            case .member(let m): members.append(m)
            case .streak(let s): streaks.append(s)
            default: break
            }
        }
        // In the order of `joined` and `started` where the snapshot gives them.
        if members.contains(where: { $0.joined != nil }) { members.sort { ($0.joined ?? 0) < ($1.joined ?? 0) } }
        if streaks.contains(where: { $0.started != nil }) { streaks.sort { ($0.started ?? 0) < ($1.started ?? 0) } }
        for m in members {
            rebuilt.run(
                .join(
                    conv: m.conv, user: m.user, name: m.name, sendTyping: m.sendTyping, locale: m.locale,
                    receiveTyping: m.receiveTyping), at: m.at)
            if m.open { rebuilt.run(.open(conv: m.conv, user: m.user, thread: m.thread, view: m.view), at: m.at) }
            if let side = m.side { rebuilt.run(.open(conv: m.conv, user: m.user, thread: side, pane: .side), at: m.at) }
            if m.forgotten { forgotten.append(m) }
        }
        for pass in [streaks, streaks.sorted { $0.keystroke < $1.keystroke }] {
            for s in pass {
                rebuilt.run(
                    .type(
                        conv: s.conv, user: s.user, thread: s.thread, status: s.status,
                        timeout: s.deadline - s.at, activity: s.activity), at: s.at)
            }
        }
        for m in forgotten { rebuilt.run(.forget(conv: m.conv, user: m.user), at: m.at) }
        if restoring { restoreAnnouncements(members, into: &rebuilt) }
    }

    /// The last step of the rebuild, with `--announce-after-ms`: a `restore` for
    /// every screen with a pending announcement, in the order of its rank, then for
    /// every screen that only announced something, so that the rebuilt engine
    /// announces when and what the original would, whatever the replay scheduled.
    static func restoreAnnouncements(_ members: [Event.Member], into rebuilt: inout Harness) {
        var screens: [(member: Event.Member, pane: Command.Pane, state: Event.Member.Announcement)] = []
        for m in members {
            if !m.announcement.isNone { screens.append((m, .main, m.announcement)) }
            if !m.sideAnnouncement.isNone { screens.append((m, .side, m.sideAnnouncement)) }
        }
        let pending = screens.filter { $0.state.due != nil }.sorted { ($0.state.rank ?? 0) < ($1.state.rank ?? 0) }
        for (m, pane, state) in pending + screens.filter({ $0.state.due == nil }) {
            rebuilt.run(
                .restore(conv: m.conv, user: m.user, pane: pane, announceAt: state.due, announced: state.announced),
                at: m.at)
        }
    }

    @Test(
        "replaying a snapshot rebuilds membership, join order, names, settings, views and typing, in every order",
        .seedOnFailure, arguments: [EngineConfiguration.Order.start, .recent, .name])
    func roundTrip(order: EngineConfiguration.Order) {
        var rng = SplitMix64.replayable(UInt64(EngineConfiguration.Order.allCases.firstIndex(of: order) ?? 0))
        for _ in 0..<20 {
            let configuration = EngineConfiguration(audience: .open, order: order)
            var h = Harness(configuration, checksEveryStep: false)
            var time = 0
            for step in 0..<300 {
                let conv = ID("c\(Int.random(in: 0..<6, using: &rng))"),
                    user = ID("u\(Int.random(in: 0..<12, using: &rng))")
                time += Int.random(in: 0..<400, using: &rng)
                switch Int.random(in: 0..<10, using: &rng) {
                case 0, 1:
                    h.run(
                        .join(
                            conv: conv, user: user, name: Bool.random(using: &rng) ? "N\(step % 7)" : nil,
                            sendTyping: ([true, false, nil] as [Bool?]).randomElement(using: &rng) ?? nil), at: time)
                case 2: h.run(.leave(conv: conv, user: user), at: time)
                case 3: h.run(.open(conv: conv, user: user), at: time)
                case 4: h.run(.close(conv: conv, user: user), at: time)
                case 5: h.run(.user(user: user, name: step % 3 == 0 ? " \t" : "R\(step)"), at: time)
                case 6, 7, 8:
                    h.run(
                        .type(
                            conv: conv, user: user,
                            timeout: Bool.random(using: &rng) ? nil : Int.random(in: 1...9000, using: &rng)),
                        at: time)
                default: h.run(.offline(user: user), at: time)
                }
            }
            h.engine.checkInvariants()
            let original = Self.content(&h)
            var rebuilt = Harness(configuration)
            var events: [Event] = []
            h.engine.apply(Request(.snapshot, line: 1), to: &events)
            Self.rebuild(from: events, into: &rebuilt)
            rebuilt.engine.checkInvariants()
            #expect(Self.content(&rebuilt) == original)
            // From here on, both show the same: every view, every timeout, in order.
            for conv in 0..<6 {
                #expect(rebuilt.run(.query(conv: ID("c\(conv)"))) == h.run(.query(conv: ID("c\(conv)"))))
            }
            for later in stride(from: time + 50, through: time + 10_000, by: 50) {
                let conv = ID("c\(Int.random(in: 0..<6, using: &rng))"),
                    user = ID("u\(Int.random(in: 0..<12, using: &rng))")
                let command: Command = later % 150 == 0 ? .type(conv: conv, user: user) : .tick
                // Line numbers differ (the rebuilt engine read fewer lines).
                func unnumbered(_ events: [String]) -> [String] {
                    events.map { $0.hasPrefix("error ") ? String($0.split(separator: " ").dropFirst(2).joined()) : $0 }
                }
                #expect(unnumbered(rebuilt.run(command, at: later)) == unnumbered(h.run(command, at: later)))
            }
        }
    }

    @Test(
        "pending announcements due at the same time, on main screens and side panes of two conversations, fire in the order their indicators were written after a rebuild; what a screen announced is not announced again"
    )
    func announcementsAtEqualTimes() {
        let configuration = EngineConfiguration(announceAfter: 1000)
        var h = Harness(configuration)
        h.join("g", "ana", "ben", "cy")
        h.join("h", "ana", "dan")
        h.run(.open(conv: ID("g"), user: ID("cy"), thread: ID("t"), pane: .side))
        h.type("g", "ana", at: 0)
        #expect(
            h.run(.tick, at: 1000) == [
                "announce @1000 g ben: Ana is typing...", "announce @1000 g cy: Ana is typing..."
            ])
        // At 1200, four screens are written, all due at 2200, in an order that is
        // not the snapshot's listing (g's members, then h's; a main screen before
        // its side pane): h's ana, cy's side pane, g's ana, g's ben. Cy's main
        // screen still shows what it announced.
        h.type("h", "dan", at: 1200)
        h.run(.type(conv: ID("g"), user: ID("ben"), thread: ID("t")), at: 1200)
        h.type("g", "cy", at: 1200)
        #expect(
            Self.snapshot(&h).filter { $0.hasPrefix("member") } == [
                "member g ana name=Ana sendTyping=true open=false announceAt=2200 announceRank=3",
                "member g ben name=Ben sendTyping=true open=false announceAt=2200 announceRank=4 announced=\"Ana is typing...\"",
                "member g cy name=Cy sendTyping=true open=false side=t announced=\"Ana is typing...\" sideAnnounceAt=2200 sideAnnounceRank=2",
                "member h ana name=Ana sendTyping=true open=false announceAt=2200 announceRank=1",
                "member h dan name=Dan sendTyping=true open=false"
            ])
        var events: [Event] = []
        h.engine.apply(Request(.snapshot, line: 1), to: &events)
        var rebuilt = Harness(configuration), replayedOnly = Harness(configuration)
        Self.rebuild(from: events, into: &rebuilt)
        Self.rebuild(from: events, into: &replayedOnly, restoring: false)
        #expect(Self.content(&rebuilt) == Self.content(&h))
        let expected = [
            "announce @2200 h ana: Dan is typing...", "announce @2200 g#t cy(side): Ben is typing...",
            "announce @2200 g ana: Cy is typing...", "announce @2200 g ben: Ana and Cy are typing..."
        ]
        #expect(h.run(.tick, at: 2200) == expected)
        #expect(rebuilt.run(.tick, at: 2200) == expected)
        // The replay alone schedules every screen it writes at 2200, in its own
        // order, and cy's main screen would say again what it said at 1000.
        let replayed = replayedOnly.run(.tick, at: 2200)
        #expect(replayed != expected)
        #expect(replayed.contains("announce @2200 g cy: Ana is typing..."))
        #expect(rebuilt.drain() == h.drain())
    }

    @Test("a conversation lists its streaks in the order they began, whatever order --order shows them in")
    func listingOrder() {
        var h = Harness(EngineConfiguration(order: .recent))
        h.join("g", "a", "b", "c", "v")
        for (user, time) in [("a", 1), ("b", 2), ("c", 3), ("a", 4)] { h.type("g", user, at: time) }
        // Shown a, c, b (latest keystroke first); begun a, b, c: no `started` needed.
        #expect(
            Self.snapshot(&h).filter { $0.hasPrefix("streak") } == [
                "streak g a deadline=3004 keystroke=3", "streak g b deadline=3002 keystroke=1",
                "streak g c deadline=3003 keystroke=2"
            ])
    }

    @Test("a snapshot counts as a command and leaves the state as it was")
    func readOnly() {
        var h = Harness()
        h.join("g", "a", "b")
        h.type("g", "a", at: 5)
        #expect(
            h.run(.snapshot, id: .integer(3)) == [
                "member g a name=A sendTyping=true open=false", "member g b name=B sendTyping=true open=false",
                "streak g a deadline=3005 keystroke=1", "snapshot conversations=1 members=2 typing=1"
            ])
        #expect(h.engine.typingCount == 1 && h.engine.commandsApplied == 4)
    }
}
