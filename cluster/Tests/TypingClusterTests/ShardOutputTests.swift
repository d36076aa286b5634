import Testing
import TypingCore
import TypingProtocol
@testable import TypingCluster

/// A session writing through a shard's format, as the shard runs it.
struct Harness: ~Copyable {
    let output: ShardOutput
    var session: Session<ShardFormat, NoSink>

    init(partition: Int = 1, buckets: Int = 16) {
        output = ShardOutput(partition: partition, buckets: buckets, audit: true)
        var configuration = SessionConfiguration(drain: false)
        configuration.engine.lateAt = .clamp
        configuration.engine.typingEvents = true
        session = Session(configuration: configuration, format: ShardFormat(output: output), sink: NoSink())
    }

    mutating func feed(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { session.feed($0) }
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
    @Test("indicators by viewer bucket, typing by conversation, replies by id, errors and snapshots without id by partition")
    func routing() {
        var harness = Harness()
        harness.feed("""
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
        #expect(subjects[bo]?.contains { $0.contains("\"viewer\":\"bo\"") && $0.contains("\"typing\":[\"ana\"]") } == true)
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
        if harness.output.audit != nil { audit = harness.output.audit!.withBytes { String(decoding: $0, as: UTF8.self) } }
        #expect(audit.split(separator: "\n").count == total)
    }

    @Test("the resync table keeps each viewer's last non-empty indicator per screen, from the values")
    func shown() {
        var harness = Harness()
        harness.feed("""
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
            #"{"cmd":"query","conv":"team","id":"q","at":3}"#,
        ]
        // The format applies each line's screen changes itself, from the command
        // the engine applied: the lines are fed as a shard feeds a message.
        harness.feed(lines.map { $0 + "\n" }.joined())
        #expect(harness.subjects()[Names.replySubject("q")]?.count == 1, "replies of a backlog are published")
        #expect(harness.subjects().keys.allSatisfy { !$0.hasPrefix("typingd.viewers.") }, "its indicators wait")
        let kept = Set(harness.output.keptViewers.map(\.string))
        #expect(kept == ["bo"], "cy opened a thread after being shown ana typing in the main chat")
        harness.output.clearTouched()
        #expect(harness.output.publishBacklog() == 1)
        let bo = Names.viewerSubject(Names.viewerBucket("bo", among: 16))
        #expect(harness.subjects()[bo]?.count == 1)
    }
}
