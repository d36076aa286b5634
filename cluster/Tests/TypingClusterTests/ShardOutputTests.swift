import Testing
import TypingCore
import TypingProtocol
@testable import TypingCluster

/// A session writing through a shard's format, as the shard runs it.
struct Harness: ~Copyable {
    let output: ShardOutput
    var session: Session<ShardFormat, NoSink>

    init(partition: Int = 1, buckets: Int = 16, announceAfter: Int? = nil) {
        output = ShardOutput(partition: partition, buckets: buckets, audit: true)
        var configuration = SessionConfiguration(drain: false)
        configuration.engine.lateAt = .clamp
        configuration.engine.typingEvents = true
        configuration.engine.announceAfter = announceAfter
        session = Session(
            configuration: configuration, format: ShardFormat(output: output), sink: NoSink(),
            observer: ShardLines(output: output))
    }

    mutating func feed(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { session.feed($0) }
    }

    /// The lines of the subject of `viewer`'s bucket.
    func viewerLines(_ viewer: String) -> [String] {
        (subjects()[Names.viewerSubject(Names.viewerBucket(viewer, among: output.buckets))] ?? []).filter {
            $0.contains("\"viewer\":\"\(viewer)\"")
        }
    }

    /// The audit's lines.
    func auditLines() -> [String] {
        guard output.audit != nil else { return [] }
        return output.audit!.withBytes { String(decoding: $0, as: UTF8.self) }.split(separator: "\n").map(String.init)
    }

    /// Each touched subject's lines.
    func subjects() -> [String: [String]] {
        var result: [String: [String]] = [:]
        for outgoing in output.touched {
            let text = outgoing.buffer.withBytes { String(decoding: $0, as: UTF8.self) }
            result[outgoing.subject] = text.split(separator: "\n").map(String.init)
        }
        return result
    }
}

@Suite("ShardOutput: each event to its subject, encoded once")
struct ShardOutputTests {
    @Test(
        "indicators by viewer bucket, typing by conversation, replies by id, errors and snapshots without id by partition"
    )
    func routing() {
        var harness = Harness()
        harness.feed(
            """
            {"cmd":"join","conv":"team","user":"ana","at":1}
            {"cmd":"join","conv":"team","user":"bo","at":1}
            {"cmd":"type","conv":"team","user":"ana","at":2}
            {"cmd":"query","conv":"team","id":"q 1","at":3}
            {"cmd":"query","conv":"team","id":7,"at":3}
            {"cmd":"nonsense"}
            {"cmd":"snapshot","at":4}
            {"cmd":"snapshot","id":"s","at":4}

            """)
        let subjects = harness.subjects()
        let bo = Names.viewerSubject(Names.viewerBucket("bo", among: 16))
        #expect(
            subjects[bo]?.contains { $0.contains("\"viewer\":\"bo\"") && $0.contains("\"typing\":[\"ana\"]") } == true)
        #expect(subjects[Names.typingSubject("team")]?.count == 1)
        #expect(subjects[Names.replySubject("q 1")]?.first?.contains("\"event\":\"state\"") == true)
        #expect(subjects[Names.replySubject(number: 7)]?.first?.contains("\"event\":\"state\"") == true)
        #expect(subjects[Names.errorSubject(1)]?.first?.contains("\"unknown_cmd\"") == true)
        // A snapshot's member and streak events go with the snapshot event after them.
        let anonymous = subjects[Names.snapshotReplySubject(1)] ?? []
        #expect(anonymous.count == 4)
        #expect(anonymous.last?.contains("\"event\":\"snapshot\"") == true)
        #expect(anonymous.first?.contains("\"event\":\"member\"") == true)
        #expect(subjects[Names.replySubject("s")]?.count == 4)
        // Every line is in exactly one subject; the audit has them all, in order.
        let total = subjects.values.map(\.count).reduce(0, +)
        #expect(total == harness.output.events)
        var audit = ""
        if harness.output.audit != nil {
            audit = harness.output.audit!.withBytes { String(decoding: $0, as: UTF8.self) }
        }
        #expect(audit.split(separator: "\n").count == total)
    }

    @Test("the resync table keeps each viewer's last non-empty indicator per screen, from the values")
    func shown() {
        var harness = Harness()
        harness.feed(
            """
            {"cmd":"join","conv":"team","user":"ana","at":1}
            {"cmd":"join","conv":"team","user":"bo","at":1}
            {"cmd":"join","conv":"dm","user":"ana","at":1}
            {"cmd":"join","conv":"dm","user":"bo","at":1}
            {"cmd":"type","conv":"team","user":"ana","at":2}
            {"cmd":"type","conv":"dm","user":"ana","at":2}
            {"cmd":"send","conv":"dm","user":"ana","at":3}

            """)
        var table = ShownTable()
        table.apply(harness.output.pendingShown)
        let bo = table.of("bo").map { String(decoding: $0, as: UTF8.self) }
        #expect(bo.count == 1, "dm was cleared by the send: only team is shown")
        #expect(bo.first?.contains("\"conv\":\"team\"") == true)
        #expect(table.of("ana").isEmpty)
    }

    @Test("a catch-up publishes replies now, and each viewer's last indicator only while they stay on its screen")
    func backlog() {
        var harness = Harness()
        harness.output.mode = .backlog
        let lines = [
            #"{"cmd":"join","conv":"team","user":"ana","at":1}"#,
            #"{"cmd":"join","conv":"team","user":"bo","at":1}"#,
            #"{"cmd":"join","conv":"team","user":"cy","at":1}"#,
            #"{"cmd":"type","conv":"team","user":"ana","at":2}"#,
            #"{"cmd":"open","conv":"team","user":"cy","thread":"t","at":3}"#,
            #"{"cmd":"query","conv":"team","id":"q","at":3}"#
        ]
        // The format applies each line's screen changes itself, from the command
        // the engine applied: the lines are fed as a shard feeds a message.
        harness.feed(lines.map { $0 + "\n" }.joined())
        #expect(harness.subjects()[Names.replySubject("q")]?.count == 1, "replies of a backlog are published")
        #expect(harness.subjects().keys.allSatisfy { !$0.hasPrefix("typingd.viewers.") }, "its indicators wait")
        let kept = Set(harness.output.keptViewers.map(\.string))
        #expect(kept == ["bo"], "cy opened a thread after being shown ana typing in the main chat")
        harness.output.clearTouched()
        #expect(harness.output.publishBacklog() == (1, 0))
        let bo = Names.viewerSubject(Names.viewerBucket("bo", among: 16))
        #expect(harness.subjects()[bo]?.count == 1)
    }

    /// A member reading the thread in both screens: the channel switched to it, and
    /// the side pane on it too.
    static let bothScreens = """
        {"cmd":"join","conv":"eng","user":"ana","at":1}
        {"cmd":"join","conv":"eng","user":"bo","at":1}
        {"cmd":"open","conv":"eng","user":"bo","thread":"t","at":1}
        {"cmd":"open","conv":"eng","user":"bo","thread":"t","pane":"side","at":1}
        {"cmd":"type","conv":"eng","user":"ana","thread":"t","at":2}

        """

    @Test("a main screen and a side pane at the same thread are two screens: both published and in the resync table")
    func sidePaneApart() {
        var harness = Harness()
        harness.feed(Self.bothScreens)
        let bo = harness.viewerLines("bo")
        #expect(bo.count == 2, "\(bo)")
        #expect(bo.filter { $0.contains("\"pane\":\"side\"") }.count == 1)
        var table = ShownTable()
        table.apply(harness.output.pendingShown)
        let shown = table.of("bo").map { String(decoding: $0, as: UTF8.self) }
        #expect(shown.count == 2, "the resync table keeps both screens: \(shown)")
        #expect(shown.filter { $0.contains("\"pane\":\"side\"") }.count == 1)
    }

    @Test("a catch-up keeps a member's main screen and side pane apart, and forgets the side pane it closes")
    func sidePaneKept() {
        var harness = Harness()
        harness.output.mode = .backlog
        harness.feed(Self.bothScreens)
        let (ana, bo, eng) = (Identifier("ana"), Identifier("bo"), Identifier("eng"))
        #expect(harness.output.kept(conv: eng, viewer: bo)?.screen.side == false)
        #expect(harness.output.kept(conv: eng, viewer: bo, side: true)?.screen.side == true)
        #expect(harness.output.keptCount == 2)
        // Bo closes his side pane: its indicator is forgotten, the main one stays.
        harness.feed(#"{"cmd":"close","conv":"eng","user":"bo","pane":"side","at":3}"# + "\n")
        #expect(harness.output.kept(conv: eng, viewer: bo, side: true) == nil)
        #expect(harness.output.kept(conv: eng, viewer: bo) != nil)
        #expect(harness.output.kept(conv: eng, viewer: ana) == nil)
        // Opened again elsewhere: it starts from empty (nobody types in u).
        harness.feed(#"{"cmd":"open","conv":"eng","user":"bo","thread":"u","pane":"side","at":4}"# + "\n")
        #expect(harness.output.kept(conv: eng, viewer: bo, side: true) == nil)
        harness.output.clearTouched()
        #expect(harness.output.publishBacklog() == (1, 0))
        #expect(harness.viewerLines("bo").count == 1)
    }

    @Test("an announcement goes to its viewer's subject and the audit, not to the resync table")
    func announcementPublished() {
        var harness = Harness(announceAfter: 1000)
        harness.feed(
            """
            {"cmd":"join","conv":"eng","user":"ana","at":1}
            {"cmd":"join","conv":"eng","user":"bo","at":1}
            {"cmd":"open","conv":"eng","user":"bo","thread":"t","pane":"side","at":1}
            {"cmd":"type","conv":"eng","user":"ana","at":2}
            {"cmd":"type","conv":"eng","user":"ana","thread":"t","timeout_ms":9000,"at":3}
            {"cmd":"tick","at":1003}

            """)
        let bo = harness.viewerLines("bo")
        let announced = bo.filter { $0.contains("\"event\":\"announce\"") }
        #expect(
            announced == [
                #"{"event":"announce","at":1003,"conv":"eng","thread":"t","viewer":"bo","pane":"side","text":"Someone is typing..."}"#
            ],
            "\(bo)")
        #expect(harness.auditLines().filter { $0.contains("\"event\":\"announce\"") }.count == 1)
        var table = ShownTable()
        table.apply(harness.output.pendingShown)
        #expect(table.of("bo").allSatisfy { !String(decoding: $0, as: UTF8.self).contains("announce") })
    }

    @Test("a catch-up publishes a screen's announcement after its indicators, while the screen still shows it")
    func announcementsKept() {
        var harness = Harness(announceAfter: 1000)
        harness.output.mode = .backlog
        let (eng, bo, cy, dee) = (Identifier("eng"), Identifier("bo"), Identifier("cy"), Identifier("dee"))
        harness.feed(
            """
            {"cmd":"join","conv":"eng","user":"ana","at":1}
            {"cmd":"join","conv":"eng","user":"bo","at":1}
            {"cmd":"join","conv":"eng","user":"cy","at":1}
            {"cmd":"join","conv":"eng","user":"dee","at":1}
            {"cmd":"join","conv":"eng","user":"eve","at":1}
            {"cmd":"open","conv":"eng","user":"dee","thread":"t","pane":"side","at":1}
            {"cmd":"type","conv":"eng","user":"ana","timeout_ms":20000,"at":10}
            {"cmd":"type","conv":"eng","user":"eve","thread":"t","timeout_ms":20000,"at":20}
            {"cmd":"tick","at":1100}

            """)
        // Every main screen but ana's was announced "Ana is typing..." at 1010, dee's
        // side pane "Eve is typing..." at 1020.
        #expect(harness.output.keptAnnouncement(conv: eng, viewer: bo) != nil)
        #expect(harness.output.keptAnnouncement(conv: eng, viewer: dee, side: true) != nil)
        // Cy's main screen moves to a thread; dee closes her side pane; bo types, so
        // the others' main screens change sentence, and his own does not.
        harness.feed(
            """
            {"cmd":"open","conv":"eng","user":"cy","thread":"u","at":1200}
            {"cmd":"close","conv":"eng","user":"dee","pane":"side","at":1200}
            {"cmd":"type","conv":"eng","user":"bo","timeout_ms":20000,"at":1300}

            """)
        #expect(harness.output.keptAnnouncement(conv: eng, viewer: cy) == nil, "cy's screen is another one now")
        #expect(harness.output.keptAnnouncement(conv: eng, viewer: dee, side: true) == nil, "dee's side pane is gone")
        #expect(harness.output.keptAnnouncement(conv: eng, viewer: dee) == nil, "dee's screen now says Ana and Bo")
        #expect(harness.output.keptAnnouncement(conv: eng, viewer: bo) != nil, "bo's screen still says Ana")
        harness.output.clearTouched()
        let published = harness.output.publishBacklog()
        #expect(published == (4, 1), "bo, dee, eve and ana's main screens; bo's announcement")
        let boLines = harness.viewerLines("bo")
        #expect(boLines.count == 2)
        #expect(
            boLines.last == #"{"event":"announce","at":1010,"conv":"eng","viewer":"bo","text":"Someone is typing..."}"#,
            "the announcement after the indicator: \(boLines)")
    }

    @Test("the resync table forgets the screens the engine forgets without an event")
    func shownForgets() {
        var harness = Harness()
        harness.feed(
            """
            {"cmd":"join","conv":"eng","user":"ana","at":1}
            {"cmd":"join","conv":"eng","user":"bo","at":1}
            {"cmd":"join","conv":"eng","user":"cy","at":1}
            {"cmd":"join","conv":"eng","user":"dee","at":1}
            {"cmd":"open","conv":"eng","user":"cy","thread":"t","pane":"side","at":1}
            {"cmd":"type","conv":"eng","user":"ana","timeout_ms":20000,"at":2}
            {"cmd":"type","conv":"eng","user":"dee","thread":"t","timeout_ms":20000,"at":2}

            """)
        var table = ShownTable()
        table.apply(harness.output.pendingShown)
        harness.output.pendingShown = []
        #expect(table.of("bo").count == 1 && table.of("cy").count == 2)
        // Bo moves his screen to a thread nobody types in; cy closes her side pane.
        harness.feed(
            """
            {"cmd":"open","conv":"eng","user":"bo","thread":"u","at":3}
            {"cmd":"close","conv":"eng","user":"cy","pane":"side","at":3}

            """)
        table.apply(harness.output.pendingShown)
        harness.output.pendingShown = []
        #expect(table.of("bo").isEmpty, "bo's screen starts from empty at u")
        #expect(table.of("cy").map { String(decoding: $0, as: UTF8.self) }.allSatisfy { !$0.contains("side") })
        #expect(table.of("cy").count == 1, "cy's main screen still shows ana")
        // Cy leaves: her screens go; a refused command forgets nothing; what dee
        // was sent is forgotten (a snapshot's rebuild of a `forgotten` member).
        harness.feed(
            """
            {"cmd":"open","conv":"eng","user":"dee","view":"list","thread":"t","at":4}
            {"cmd":"leave","conv":"eng","user":"cy","at":4}

            """)
        table.apply(harness.output.pendingShown)
        harness.output.pendingShown = []
        #expect(table.of("cy").isEmpty)
        #expect(table.of("dee").count == 1, "dee's refused open changed nothing")
        harness.feed(#"{"cmd":"forget","conv":"eng","user":"dee","at":5}"# + "\n")
        table.apply(harness.output.pendingShown)
        #expect(table.of("dee").isEmpty)
    }

    @Test("after a catch-up, the resync table shows nothing on a screen its backlog forgot")
    func shownAfterCatchUp() {
        var harness = Harness()
        // Rebuilt from a snapshot: bo is shown ana typing.
        harness.output.mode = .suppress
        harness.feed(
            """
            {"cmd":"join","conv":"eng","user":"ana","at":1}
            {"cmd":"join","conv":"eng","user":"bo","at":1}
            {"cmd":"type","conv":"eng","user":"ana","at":2}

            """)
        var table = ShownTable()
        table.apply(harness.output.pendingShown)
        harness.output.pendingShown = []
        #expect(table.of("bo").count == 1)
        // The backlog: ana sends (bo is sent the empty indicator), then bo is
        // removed and joins again: his screen starts from empty, nothing is sent.
        harness.output.mode = .backlog
        harness.feed(
            """
            {"cmd":"send","conv":"eng","user":"ana","at":3}
            {"cmd":"remove","conv":"eng","user":"bo","at":4}
            {"cmd":"join","conv":"eng","user":"bo","at":5}

            """)
        harness.output.mode = .publish
        #expect(harness.output.publishBacklog() == (0, 0))
        table.apply(harness.output.pendingShown)
        #expect(table.of("bo").isEmpty, "\(table.of("bo").map { String(decoding: $0, as: UTF8.self) })")
    }

    @Test("a timeout due at a line's time is kept before the line moves its screen")
    func timeoutsBeforeTheLine() {
        var harness = Harness(announceAfter: 500)
        harness.output.mode = .backlog
        harness.feed(
            """
            {"cmd":"join","conv":"eng","user":"ana","at":1}
            {"cmd":"join","conv":"eng","user":"bo","at":1}
            {"cmd":"type","conv":"eng","user":"ana","at":10}
            {"cmd":"leave","conv":"eng","user":"bo","at":600}

            """)
        // The announcement due at 510 fired at the start of bo's leave: it was for
        // a screen bo had then, and the leave forgets it with the screen.
        #expect(harness.output.keptAnnouncement(conv: Identifier("eng"), viewer: Identifier("bo")) == nil)
        #expect(harness.output.kept(conv: Identifier("eng"), viewer: Identifier("bo")) == nil)
        #expect(
            harness.auditLines().contains { $0.contains("\"event\":\"announce\"") && $0.contains("\"viewer\":\"bo\"") })
    }
}
