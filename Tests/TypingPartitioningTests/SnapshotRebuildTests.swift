import Testing
import TypingCore
import TypingPartitioning
import TypingProtocol

/// A format that writes the protocol's JSON and keeps the snapshot events it saw as
/// values (what a cluster's shard does with its own snapshots).
struct KeepingFormat: EventFormat, ~Copyable {
    final class Kept {
        var members: [Event.Member] = []
        var streaks: [Event.Streak] = []
    }
    var json = JSONFormat()
    let kept: Kept

    mutating func encode(_ event: Event, into buffer: inout OutputBuffer) {
        switch event {
        case .member(let member): kept.members.append(member)
        case .streak(let streak): kept.streaks.append(streak)
        default: break
        }
        json.encode(event, into: &buffer)
    }
}

@Suite("SnapshotRebuild: a snapshot's events as commands")
struct SnapshotRebuildTests {
    static func lines(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Before the snapshot: members out of join order across conversations, names,
    /// threads, chat-list views, receive_typing off, an offline that forgets screens,
    /// streaks started in one order and typed in another, activities.
    static let before = """
        {"cmd":"join","conv":"b","user":"u2","name":"Zoé","at":1}
        {"cmd":"join","conv":"a","user":"u1","name":"Ana","at":2}
        {"cmd":"join","conv":"a","user":"u2","at":3}
        {"cmd":"join","conv":"b","user":"u1","at":4}
        {"cmd":"join","conv":"a","user":"u3","name":"Cy","receive_typing":false,"at":5}
        {"cmd":"join","conv":"b","user":"u4","send_typing":false,"at":6}
        {"cmd":"join","conv":"a","user":"u4","at":6}
        {"cmd":"join","conv":"b","user":"u3","at":6}
        {"cmd":"open","conv":"a","user":"u1","thread":"t1","at":7}
        {"cmd":"open","conv":"b","user":"u2","view":"list","at":8}
        {"cmd":"open","conv":"a","user":"u4","at":9}
        {"cmd":"type","conv":"b","user":"u2","at":10}
        {"cmd":"type","conv":"a","user":"u3","activity":"recording_audio","at":11}
        {"cmd":"type","conv":"a","user":"u2","thread":"t1","at":12}
        {"cmd":"type","conv":"a","user":"u1","at":13}
        {"cmd":"type","conv":"b","user":"u2","at":14}
        {"cmd":"type","conv":"b","user":"u3","at":15}
        {"cmd":"type","conv":"a","user":"u3","at":1500}
        {"cmd":"offline","user":"u1","at":1500}

        """

    /// After it: keystrokes, sends, screens changing, timeouts firing.
    static let after = """
        {"cmd":"type","conv":"a","user":"u4","at":1600}
        {"cmd":"open","conv":"a","user":"u4","at":1700}
        {"cmd":"type","conv":"b","user":"u1","at":1800}
        {"cmd":"send","conv":"a","user":"u1","at":1900}
        {"cmd":"open","conv":"a","user":"u2","thread":"t1","at":2000}
        {"cmd":"tick","at":3011}
        {"cmd":"tick","at":3014}
        {"cmd":"type","conv":"a","user":"u2","thread":"t1","at":3100}
        {"cmd":"close","conv":"b","user":"u2","at":3200}
        {"cmd":"query","conv":"a","id":"q1","at":3300}
        {"cmd":"query","conv":"a","thread":"t1","id":"q2","at":3300}
        {"cmd":"tick","at":4600}
        {"cmd":"tick","at":9000}

        """

    static func configuration() -> SessionConfiguration {
        var configuration = SessionConfiguration(drain: false)
        configuration.engine.lateAt = .clamp
        return configuration
    }

    @Test("a session rebuilt from a snapshot writes what the original writes for the commands that follow")
    func rebuiltSessionAgrees() throws {
        let kept = KeepingFormat.Kept()
        var original = Session(configuration: Self.configuration(), format: KeepingFormat(kept: kept), sink: [UInt8]())
        _ = Self.lines(Self.before + #"{"cmd":"snapshot","id":"s"}"# + "\n").withUnsafeBytes { original.feed($0) }
        original.flush()
        #expect(kept.members.count == 8)
        #expect(kept.streaks.count == 4)
        #expect(kept.members.contains { $0.forgotten }, "the offline forgot a screen: the recipe's forget is exercised")
        #expect(kept.members.contains { $0.joined != nil }, "memberships out of join order: joined is exercised")
        #expect(kept.streaks.contains { $0.started != nil }, "streaks out of start order: started is exercised")

        let commands = SnapshotRebuild.commands(members: kept.members, streaks: kept.streaks)
        var rebuilt = Session(configuration: Self.configuration(), sink: [UInt8]())
        _ = commands.withUnsafeBytes { rebuilt.feed($0) }
        rebuilt.flush()
        #expect(
            !String(decoding: rebuilt.sink, as: UTF8.self).contains("\"error\""), "the recipe's lines are all applied")
        let start = (original.sink.count, rebuilt.sink.count)
        _ = Self.lines(Self.after + #"{"cmd":"snapshot","id":"s2"}"# + "\n").withUnsafeBytes { original.feed($0) }
        _ = Self.lines(Self.after + #"{"cmd":"snapshot","id":"s2"}"# + "\n").withUnsafeBytes { rebuilt.feed($0) }
        original.flush()
        rebuilt.flush()
        let expected = String(decoding: original.sink[start.0...], as: UTF8.self)
        let actual = String(decoding: rebuilt.sink[start.1...], as: UTF8.self)
        #expect(expected.contains("\"indicator\""))
        #expect(actual == expected)
    }

    @Test("status streaks keep their words through a snapshot: the rebuilt session writes what the original writes")
    func statusRoundTrip() throws {
        let before = #"""
            {"cmd":"join","conv":"a","user":"ana","name":"Ana","at":1}
            {"cmd":"join","conv":"a","user":"bot","name":"Claude","at":1}
            {"cmd":"join","conv":"a","user":"cy","at":1}
            {"cmd":"join","conv":"a","user":"dee","name":"Dee","at":1}
            {"cmd":"open","conv":"a","user":"ana","thread":"t","at":1}
            {"cmd":"type","conv":"a","user":"ana","at":10}
            {"cmd":"type","conv":"a","user":"bot","activity":"status","status":"is \"searching\" {0} \u202eweb\u200d","timeout_ms":60000,"at":20}
            {"cmd":"type","conv":"a","user":"cy","activity":"status","status":"{verb}","thread":"t","at":30}
            {"cmd":"type","conv":"a","user":"dee","activity":"recording_audio","at":40}

            """#
        let after = #"""
            {"cmd":"type","conv":"a","user":"bot","activity":"status","status":"is \"searching\" {0} \u202eweb\u200d","at":100}
            {"cmd":"type","conv":"a","user":"ana","activity":"status","status":"is back","at":200}
            {"cmd":"type","conv":"a","user":"bot","activity":"status","status":"is thinking","at":300}
            {"cmd":"query","conv":"a","id":"q","at":400}
            {"cmd":"open","conv":"a","user":"dee","thread":"t","at":500}
            {"cmd":"tick","at":4000}
            {"cmd":"tick","at":70000}

            """#
        var configuration = Self.configuration()
        configuration.engine.typingEvents = true
        let kept = KeepingFormat.Kept()
        var original = Session(configuration: configuration, format: KeepingFormat(kept: kept), sink: [UInt8]())
        _ = Self.lines(before + #"{"cmd":"snapshot","id":"s"}"# + "\n").withUnsafeBytes { original.feed($0) }
        original.flush()
        #expect(
            kept.streaks.map { $0.status.map { Array($0.utf8) } }
                == [nil, Array("is \"searching\" {0} \u{202E}web\u{200D}".utf8), Array("{verb}".utf8), nil])
        let commands = SnapshotRebuild.commands(members: kept.members, streaks: kept.streaks)
        var rebuilt = Session(configuration: configuration, sink: [UInt8]())
        _ = commands.withUnsafeBytes { rebuilt.feed($0) }
        rebuilt.flush()
        #expect(
            !String(decoding: rebuilt.sink, as: UTF8.self).contains("\"error\""), "the recipe's lines are all applied")
        let start = (original.sink.count, rebuilt.sink.count)
        let tail = Self.lines(after + #"{"cmd":"snapshot","id":"s2"}"# + "\n")
        _ = tail.withUnsafeBytes { original.feed($0) }
        _ = tail.withUnsafeBytes { rebuilt.feed($0) }
        original.flush()
        rebuilt.flush()
        let expected = String(decoding: original.sink[start.0...], as: UTF8.self)
        let actual = String(decoding: rebuilt.sink[start.1...], as: UTF8.self)
        #expect(expected.contains("Claude is thinking"))
        #expect(actual == expected)
    }

    /// Runs `before` and a snapshot in a session with `configuration`, rebuilds
    /// another from the snapshot's recipe, then feeds both `after` and finishes them:
    /// the recipe's `restore` lines, what the rebuild wrote, and what each wrote for
    /// `after` (the original's, then the rebuilt one's).
    static func roundTrip(before: String, after: String, configuration: SessionConfiguration)
        -> (restores: [Substring], rebuilt: String, expected: String, actual: String)
    {
        let kept = KeepingFormat.Kept()
        var original = Session(configuration: configuration, format: KeepingFormat(kept: kept), sink: [UInt8]())
        _ = Self.lines(before + #"{"cmd":"snapshot","id":"s"}"# + "\n").withUnsafeBytes { original.feed($0) }
        original.flush()
        let commands = SnapshotRebuild.commands(members: kept.members, streaks: kept.streaks)
        let restores = String(decoding: commands, as: UTF8.self).split(separator: "\n").filter {
            $0.contains("restore")
        }
        var rebuilt = Session(configuration: configuration, sink: [UInt8]())
        _ = commands.withUnsafeBytes { rebuilt.feed($0) }
        rebuilt.flush()
        let rebuiltLog = String(decoding: rebuilt.sink, as: UTF8.self)
        let start = (original.sink.count, rebuilt.sink.count)
        _ = Self.lines(after).withUnsafeBytes { original.feed($0) }
        _ = Self.lines(after).withUnsafeBytes { rebuilt.feed($0) }
        original.finish()
        rebuilt.finish()
        original.flush()
        rebuilt.flush()
        return (
            restores, rebuiltLog, String(decoding: original.sink[start.0...], as: UTF8.self),
            String(decoding: rebuilt.sink[start.1...], as: UTF8.self)
        )
    }

    @Test(
        "with announcements, a rebuilt session announces what the original does, at equal times in the same order, and not again what a screen announced"
    )
    func announcementsRoundTrip() throws {
        let before = """
            {"cmd":"join","conv":"g","user":"ana","name":"Ana","at":0}
            {"cmd":"join","conv":"g","user":"ben","name":"Ben","at":0}
            {"cmd":"join","conv":"g","user":"cy","name":"Cy","at":0}
            {"cmd":"join","conv":"h","user":"ana","at":0}
            {"cmd":"join","conv":"h","user":"dan","name":"Dan","at":0}
            {"cmd":"open","conv":"g","user":"cy","thread":"t","pane":"side","at":0}
            {"cmd":"type","conv":"g","user":"ana","at":0}
            {"cmd":"tick","at":1000}
            {"cmd":"type","conv":"h","user":"dan","at":1200}
            {"cmd":"type","conv":"g","user":"ben","thread":"t","at":1200}
            {"cmd":"type","conv":"g","user":"cy","at":1200}

            """
        let after = """
            {"cmd":"tick","at":2200}
            {"cmd":"type","conv":"g","user":"ben","thread":"t","at":2500}
            {"cmd":"tick","at":5000}
            {"cmd":"type","conv":"g","user":"ana","at":6000}

            """
        var configuration = Self.configuration()
        configuration.engine.announceAfter = 1000
        configuration.drain = true
        let (restores, rebuiltLog, expected, actual) = Self.roundTrip(
            before: before, after: after, configuration: configuration)
        #expect(
            restores == [
                #"{"cmd":"restore","conv":"h","user":"ana","at":1200,"announce_at":2200}"#,
                #"{"cmd":"restore","conv":"g","user":"cy","at":1200,"pane":"side","announce_at":2200}"#,
                #"{"cmd":"restore","conv":"g","user":"ana","at":1200,"announce_at":2200}"#,
                #"{"cmd":"restore","conv":"g","user":"ben","at":1200,"announce_at":2200,"announced":"Ana is typing..."}"#,
                #"{"cmd":"restore","conv":"g","user":"cy","at":1200,"announced":"Ana is typing..."}"#
            ])
        #expect(!rebuiltLog.contains("\"error\""), "the recipe's lines are all applied")
        #expect(
            expected.hasPrefix(
                """
                {"event":"announce","at":2200,"conv":"h","viewer":"ana","text":"Dan is typing..."}
                {"event":"announce","at":2200,"conv":"g","thread":"t","viewer":"cy","pane":"side","text":"Ben is typing..."}
                {"event":"announce","at":2200,"conv":"g","viewer":"ana","text":"Cy is typing..."}
                {"event":"announce","at":2200,"conv":"g","viewer":"ben","text":"Ana and Cy are typing..."}

                """))
        #expect(actual == expected)
    }

    @Test(
        "a hand-sent restore that clears a shown sentence: the snapshot says \"announced\":\"\" and the rebuild does not announce it either"
    )
    func restoreClearingAShownSentence() throws {
        let before = """
            {"cmd":"join","conv":"g","user":"ana","name":"Ana","at":0}
            {"cmd":"join","conv":"g","user":"ben","name":"Ben","at":0}
            {"cmd":"type","conv":"g","user":"ana","at":0}
            {"cmd":"restore","conv":"g","user":"ben","at":10}

            """
        let after = """
            {"cmd":"tick","at":2000}
            {"cmd":"type","conv":"g","user":"ben","at":2100}
            {"cmd":"tick","at":4000}

            """
        var configuration = Self.configuration()
        configuration.engine.announceAfter = 1000
        let (restores, rebuiltLog, expected, actual) = Self.roundTrip(
            before: before, after: after, configuration: configuration)
        #expect(restores == [#"{"cmd":"restore","conv":"g","user":"ben","at":10,"announced":""}"#])
        #expect(!rebuiltLog.contains("\"error\""), "the recipe's lines are all applied")
        #expect(
            !expected.contains(#""viewer":"ben","text":"Ana is typing...""#), "ben's cleared sentence is not announced")
        #expect(expected.contains(#""event":"announce""#))
        #expect(actual == expected)
    }

    @Test("restore: not a member, a side pane the member lacks, a time already past")
    func restoreRefusals() {
        var configuration = Self.configuration()
        configuration.engine.announceAfter = 1000
        configuration.engine.lateAt = .refuse
        var session = Session(configuration: configuration, sink: [UInt8]())
        let input = """
            {"cmd":"join","conv":"g","user":"ana","at":100}
            {"cmd":"restore","conv":"g","user":"zed","announce_at":500}
            {"cmd":"restore","conv":"g","user":"ana","pane":"side","announce_at":500}
            {"cmd":"restore","conv":"g","user":"ana","announce_at":99}
            {"cmd":"restore","conv":"g","user":"ana","announce_at":100,"id":"r"}

            """
        _ = Self.lines(input).withUnsafeBytes { session.feed($0) }
        session.flush()
        #expect(
            String(decoding: session.sink, as: UTF8.self) == #"""
                {"event":"error","line":2,"code":"not_member","message":"user \"zed\" is not a member of conversation \"g\"","field":"user"}
                {"event":"error","line":3,"code":"bad_field","message":"user \"ana\" has no side pane in conversation \"g\" to restore","field":"pane"}
                {"event":"error","line":4,"code":"bad_field","message":"\"announce_at\" 99 is earlier than the current time 100; a pending announcement fires later","field":"announce_at"}
                {"event":"ok","line":5,"id":"r"}

                """#)
    }

    @Test("the commands: joins with names and settings, opens, both orders of streaks, forgets")
    func recipeLines() {
        let member = Event.Member(
            at: 5, conv: Identifier("c"), user: Identifier("u"), name: "A \"q\"", sendTyping: false,
            open: true, thread: Identifier("t"), view: .list, receiveTyping: false, forgotten: true)
        let streak = Event.Streak(
            at: 5, conv: Identifier("c"), user: Identifier("u"), activity: .sendingPhoto, deadline: 3005, keystroke: 1)
        let status = Event.Streak(
            at: 5, conv: Identifier("c"), user: Identifier("v"), activity: .status,
            status: "is \"here\" \u{2028}", deadline: 3005, keystroke: 2)
        #expect(
            String(decoding: SnapshotRebuild.commands(members: [], streaks: [status]), as: UTF8.self) == """
                {"cmd":"type","conv":"c","user":"v","at":5,"activity":"status","status":"is \\"here\\" \\u2028","timeout_ms":3000}
                {"cmd":"type","conv":"c","user":"v","at":5,"activity":"status","status":"is \\"here\\" \\u2028","timeout_ms":3000}

                """)
        let text = String(decoding: SnapshotRebuild.commands(members: [member], streaks: [streak]), as: UTF8.self)
        #expect(
            text == """
                {"cmd":"join","conv":"c","user":"u","at":5,"name":"A \\"q\\"","send_typing":false,"receive_typing":false}
                {"cmd":"open","conv":"c","user":"u","at":5,"thread":"t","view":"list"}
                {"cmd":"type","conv":"c","user":"u","at":5,"activity":"sending_photo","timeout_ms":3000}
                {"cmd":"type","conv":"c","user":"u","at":5,"activity":"sending_photo","timeout_ms":3000}
                {"cmd":"forget","conv":"c","user":"u","at":5}

                """)
    }
}
