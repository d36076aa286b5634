import Testing
import TypingCore
import TypingProtocol
@testable import TypingCluster
import TypingTestSupport

/// A catch-up's kept indicators and announcements (tables keyed by (conv,
/// viewer, pane) and a list of each viewer's conversations) against a reference
/// model: a plain table per screen with the rules written out once more, fed each
/// line's indicators and announcements as the engine wrote them.
@Suite("ShardOutput: a catch-up keeps what the model keeps")
struct ShardBacklogModelTests {
    /// A session through a shard's format, with the audience rule given.
    struct Runner: ~Copyable {
        let output: ShardOutput
        var session: Session<ShardFormat, NoSink>

        init(audienceOpen: Bool, mode: ShardOutput.Mode) {
            output = ShardOutput(partition: 1, buckets: 16, audit: mode == .publish)
            output.audienceOpen = audienceOpen
            output.mode = mode
            var configuration = SessionConfiguration(drain: false)
            configuration.engine.lateAt = .clamp
            configuration.engine.audience = audienceOpen ? .open : .members
            configuration.engine.announceAfter = 1000
            configuration.maxLineBytes = ShardBacklogModelTests.maxLineBytes
            session = Session(
                configuration: configuration, format: ShardFormat(output: output), sink: NoSink(),
                observer: ShardLines(output: output))
        }

        mutating func feed(_ line: String) {
            _ = Array((line + "\n").utf8).withUnsafeBytes { session.feed($0) }
        }
    }

    /// An event of a line, for the model: an indicator (its value), or an
    /// announcement (its screen, text and JSON line).
    enum Written {
        case indicator(ShownTable.Change)
        case announce(key: ShardOutput.BacklogKey, screen: ShardOutput.Screen, text: String, line: String)
    }

    /// The catch-up's rules written plainly: each screen's kept indicator and kept
    /// announcement.
    struct Model {
        var table: [ShardOutput.BacklogKey: ShardOutput.Kept] = [:]
        var announced: [ShardOutput.BacklogKey: (screen: ShardOutput.Screen, text: String, line: String)] = [:]
        let audienceOpen: Bool

        mutating func forget(_ key: ShardOutput.BacklogKey) {
            table[key] = nil
            announced[key] = nil
        }

        mutating func moved(_ key: ShardOutput.BacklogKey, to screen: ShardOutput.Screen) {
            if let kept = table[key], kept.screen != screen { table[key] = nil }
            if let kept = announced[key], kept.screen != screen { announced[key] = nil }
        }

        /// Keeps a line's events.
        mutating func keep(_ written: [Written]) {
            for event in written {
                switch event {
                case .indicator(let change):
                    let key = ShardOutput.BacklogKey(
                        conv: change.indicator.conv, viewer: change.viewer, side: change.screen.side)
                    if let kept = announced[key], kept.text != change.indicator.view.text { announced[key] = nil }
                    table[key] = ShardOutput.Kept(screen: change.screen, indicator: change.indicator)
                case .announce(let key, let screen, let text, let line):
                    announced[key] = (screen, text, line)
                }
            }
        }

        /// One line: the events of the timeouts and announcements due by its time,
        /// its command (nil when refused or not applied) and the command's events.
        mutating func commit(timers: [Written], _ command: Command?, _ written: [Written]) {
            typealias Key = ShardOutput.BacklogKey
            keep(timers)
            var after: (viewer: Identifier, offline: Bool)? = nil
            let main = { (conv: Identifier) in ShardOutput.Screen(conv: conv, thread: nil, list: false) }
            switch command {
            case .leave(let conv, let user)?, .remove(let conv, let user, _)?:
                forget(Key(conv: conv, viewer: user))
                forget(Key(conv: conv, viewer: user, side: true))
            case .open(let conv, let user, let thread, _, .side)?:
                moved(
                    Key(conv: conv, viewer: user, side: true),
                    to: ShardOutput.Screen(conv: conv, thread: thread, list: false, side: true))
            case .close(let conv, let user, .side)?:
                forget(Key(conv: conv, viewer: user, side: true))
            case .open(let conv, let user, let thread, let view, _)?:
                moved(
                    Key(conv: conv, viewer: user),
                    to: ShardOutput.Screen(conv: conv, thread: thread, list: view == .list))
            case .close(let conv, let user, _)?:
                if audienceOpen {
                    forget(Key(conv: conv, viewer: user))
                } else {
                    moved(Key(conv: conv, viewer: user), to: main(conv))
                }
            case .join(let conv, let user, _, _, _, let receiveTyping)?:
                moved(Key(conv: conv, viewer: user), to: main(conv))
                if receiveTyping == false { after = (user, false) }
            case .user(let user, _, _, _, let receiveTyping)?:
                if receiveTyping == false { after = (user, false) }
            case .offline(let user)?:
                after = (user, true)
            case .forget(let conv, let user)?:
                forget(Key(conv: conv, viewer: user))
            default:
                break
            }
            keep(written)
            guard let (viewer, offline) = after else { return }
            for key in Set(table.keys).union(announced.keys) where key.viewer == viewer {
                if key.side || !(offline && !audienceOpen) { forget(key) } else { moved(key, to: main(key.conv)) }
            }
        }
    }

    /// A random line of a small world (4 users, 3 conversations, 2 threads) and its
    /// command; `busy` is a user who opens and closes threads and views often.
    static func line(_ random: inout SplitMix64, at time: Int) -> (String, Command?) {
        let users = ["u0", "u1", "u2", "u3"], convs = ["c0", "c1", "c2"], threads = ["t0", "t1"]
        let busy = random.below(2) == 0
        let user = busy ? "u0" : users[random.below(users.count)]
        let conv = convs[random.below(busy ? 2 : convs.count)]
        let (u, c) = (Identifier(user), Identifier(conv))
        let head = "\"conv\":\"\(conv)\",\"user\":\"\(user)\",\"at\":\(time)"
        if random.below(8) == 0 { return odd(&random, head: head, user: user, u: u, c: c, at: time) }
        switch random.below(busy ? 6 : 20) {
        case 0, 1:
            let thread = threads[random.below(threads.count)]
            if random.below(3) == 0 {
                return (
                    "{\"cmd\":\"open\",\(head),\"thread\":\"\(thread)\",\"pane\":\"side\"}",
                    .open(conv: c, user: u, thread: Identifier(thread), view: .chat, pane: .side)
                )
            }
            return (
                "{\"cmd\":\"open\",\(head),\"thread\":\"\(thread)\"}",
                .open(conv: c, user: u, thread: Identifier(thread), view: .chat)
            )
        case 2:
            return ("{\"cmd\":\"open\",\(head),\"view\":\"list\"}", .open(conv: c, user: u, thread: nil, view: .list))
        case 3: return ("{\"cmd\":\"open\",\(head)}", .open(conv: c, user: u, thread: nil, view: .chat))
        case 4:
            if random.below(3) == 0 {
                return ("{\"cmd\":\"close\",\(head),\"pane\":\"side\"}", .close(conv: c, user: u, pane: .side))
            }
            return ("{\"cmd\":\"close\",\(head)}", .close(conv: c, user: u))
        case 5: return ("{\"cmd\":\"join\",\(head)}", .join(conv: c, user: u))
        case 6, 7, 8, 9:
            if random.below(3) == 0 {
                let thread = threads[random.below(threads.count)]
                return (
                    "{\"cmd\":\"type\",\(head),\"thread\":\"\(thread)\"}",
                    .type(conv: c, user: u, thread: Identifier(thread))
                )
            }
            return ("{\"cmd\":\"type\",\(head)}", .type(conv: c, user: u))
        case 10: return ("{\"cmd\":\"send\",\(head)}", .send(conv: c, user: u))
        case 11: return ("{\"cmd\":\"leave\",\(head)}", .leave(conv: c, user: u))
        case 12: return ("{\"cmd\":\"remove\",\(head),\"by\":\"u1\"}", .remove(conv: c, user: u, by: Identifier("u1")))
        case 13: return ("{\"cmd\":\"offline\",\"user\":\"\(user)\",\"at\":\(time)}", .offline(user: u))
        case 14:
            let receive = random.below(2) == 0
            return (
                "{\"cmd\":\"user\",\"user\":\"\(user)\",\"receive_typing\":\(receive),\"at\":\(time)}",
                .user(user: u, receiveTyping: receive)
            )
        case 15:
            let receive = random.below(2) == 0
            return (
                "{\"cmd\":\"join\",\(head),\"receive_typing\":\(receive)}",
                .join(conv: c, user: u, receiveTyping: receive)
            )
        case 16: return ("{\"cmd\":\"tick\",\"at\":\(time)}", .tick)
        case 17:
            // Refused: a list view takes no thread, a side pane needs one (nothing may change).
            if random.below(2) == 0 { return ("{\"cmd\":\"open\",\(head),\"pane\":\"side\"}", nil) }
            return ("{\"cmd\":\"open\",\(head),\"view\":\"list\",\"thread\":\"t0\"}", nil)
        default: return ("{\"cmd\":\"join\",\(head)}", .join(conv: c, user: u))
        }
    }

    /// The most bytes a line of these runs may have: a longer one is refused as too long.
    static let maxLineBytes = 512

    /// A line that is not one of the commands above: refused before the engine
    /// (not JSON, an unknown command, a field of the wrong type, too long), blank,
    /// or a command that changes no screen (forget, user and join with a name, query).
    static func odd(_ random: inout SplitMix64, head: String, user: String, u: Identifier, c: Identifier, at time: Int)
        -> (String, Command?)
    {
        switch random.below(9) {
        case 0: return ("{\"cmd\":\"leave\",\(head)", nil)
        case 1: return ("{\"cmd\":\"dance\",\(head)}", nil)
        case 2: return ("{\"cmd\":\"close\",\(head),\"conv\":7}", nil)
        case 3:
            let padding = String(repeating: "x", count: maxLineBytes)
            return ("{\"cmd\":\"leave\",\(head),\"pad\":\"\(padding)\"}", nil)
        case 4: return (random.below(2) == 0 ? "" : " \t ", nil)
        case 5: return ("{\"cmd\":\"forget\",\(head)}", .forget(conv: c, user: u))
        case 6:
            return (
                "{\"cmd\":\"user\",\"user\":\"\(user)\",\"name\":\"N\(random.below(3))\",\"at\":\(time)}",
                .user(user: u, name: "N")
            )
        case 7:
            return ("{\"cmd\":\"join\",\(head),\"name\":\"J\(random.below(3))\"}", .join(conv: c, user: u, name: "J"))
        default: return ("{\"cmd\":\"query\",\"conv\":\"c0\",\"id\":\"q\"}", .query(conv: Identifier("c0")))
        }
    }

    /// The events the reference runner wrote for its last line, in order: the
    /// indicators' values, and each announcement read back from the audit.
    static func written(_ runner: borrowing Runner) -> [Written] {
        var shown = runner.output.pendingShown.compactMap { step -> ShownTable.Change? in
            if case .shown(let change) = step { return change } else { return nil }
        }[...]
        var result: [Written] = []
        var text = ""
        if runner.output.audit != nil { text = runner.output.audit!.withBytes { String(decoding: $0, as: UTF8.self) } }
        for line in text.split(separator: "\n") {
            let event = String(line.drop { $0 != "{" })
            if event.contains("\"event\":\"indicator\""), let change = shown.popFirst() {
                result.append(.indicator(change))
            } else if event.contains("\"event\":\"announce\""), let value = JSONValue.parse(Array(event.utf8)),
                let conv = value["conv"]?.string, let viewer = value["viewer"]?.string,
                let words = value["text"]?.string
            {
                let side = value["pane"]?.string == "side"
                let screen = ShardOutput.Screen(
                    conv: Identifier(conv), thread: value["thread"]?.string.map { Identifier($0) },
                    list: value["view"]?.string == "list", side: side)
                result.append(
                    .announce(
                        key: ShardOutput.BacklogKey(conv: Identifier(conv), viewer: Identifier(viewer), side: side),
                        screen: screen, text: words, line: event))
            }
        }
        return result
    }

    @Test(
        "after every line of random catch-ups, the kept indicators and announcements are the model's",
        arguments: [(1, false), (2, true), (3, false), (4, true)] as [(UInt64, Bool)])
    func keptAsBefore(seed: UInt64, audienceOpen: Bool) {
        var random = SplitMix64(seed: seed)
        var reference = Runner(audienceOpen: audienceOpen, mode: .publish)
        var backlog = Runner(audienceOpen: audienceOpen, mode: .backlog)
        var model = Model(audienceOpen: audienceOpen)
        var time = 1, differing: [String] = [], applied = 0, kept = 0, longest = 0, announcements = 0, side = 0,
            made = 0
        var json = JSONFormat()
        for number in 1...6_000 {
            time += random.below(4) == 0 ? random.below(8_000) : random.below(300)
            let (line, command) = Self.line(&random, at: time)
            let before = reference.output.events
            reference.output.lineBeganAt = -1
            reference.feed(line)
            // The events before the command began: its timeouts' and announcements'.
            let timers = reference.output.lineBeganAt < 0 ? 0 : reference.output.lineBeganAt - before
            let refused = reference.output.touched.contains { $0.subject == Names.errorSubject(1) }
            let written = Self.written(reference)
            made += written.filter { if case .announce = $0 { return true } else { return false } }.count
            reference.output.pendingShown = []
            reference.output.audit?.removeAll()
            reference.output.clearTouched()
            if !refused { applied += 1 }
            model.commit(
                timers: Array(written.prefix(timers)), refused ? nil : command, Array(written.dropFirst(timers)))
            backlog.feed(line)
            backlog.output.clearTouched()

            // The kept announcements: the same screens, the same events.
            let keptAnnouncements = backlog.output.announcements.mapValues { kept -> String in
                var buffer = OutputBuffer(capacity: 256)
                json.encode(.announce(kept.announce), into: &buffer)
                return buffer.withBytes { String(decoding: $0.dropLast(), as: UTF8.self) }
            }
            announcements = max(announcements, keptAnnouncements.count)
            side = max(side, backlog.output.backlog.keys.filter(\.side).count)
            let sameAnnouncements =
                keptAnnouncements.count == model.announced.count
                && keptAnnouncements.allSatisfy { key, line in
                    model.announced[key]?.line == line
                        && model.announced[key]?.screen == backlog.output.announcements[key]?.screen
                }
            if !sameAnnouncements && differing.count < 3 {
                differing.append(
                    "after line \(number) \(line): announcements kept \(keptAnnouncements.values.sorted()), the model's \(model.announced.values.map(\.line).sorted())"
                )
            }

            let table = backlog.output.backlog
            kept = max(kept, table.count)
            let flat = model.table
            let same =
                flat.count == table.count
                && flat.allSatisfy { key, value in
                    table[key].map { $0.screen == value.screen && $0.indicator == value.indicator } ?? false
                }
            if !same && differing.count < 3 {
                differing.append(
                    "after line \(number) \(line): kept \(table.map { "\($0.key.viewer)@\($0.key.conv) \($0.value.screen)" }.sorted()), the model \(flat.map { "\($0.key.viewer)@\($0.key.conv) \($0.value.screen)" }.sorted())"
                )
            }
            // Every kept entry is found through its viewer's list.
            for key in Set(table.keys).union(backlog.output.announcements.keys)
            where !(backlog.output.backlogConvs[key.viewer]?.convs.contains(key.conv) ?? false) {
                if differing.count < 3 { differing.append("after line \(number): \(key) is not in its viewer's list") }
            }
            longest = max(longest, backlog.output.backlogConvs.values.map(\.convs.count).max() ?? 0)
        }
        #expect(differing.isEmpty, "\(differing.joined(separator: "\n"))")
        #expect(applied > 3_000 && kept > 3, "\(applied) lines applied, at most \(kept) kept")
        #expect(
            made > 50 && announcements >= 2 && side > 0,
            "\(made) announcements made, at most \(announcements) of them and \(side) side panes kept")
        // The lists hold a viewer's conversations (3 here), each maybe more than once
        // while stale: they stay short (compacted past 16).
        #expect(longest <= 20, "a viewer's list grew to \(longest) conversations, for 3")
    }

    @Test("a viewer forgotten and kept again a thousand times: its list stays short")
    func forgottenAndKeptAgain() {
        var backlog = Runner(audienceOpen: false, mode: .backlog)
        backlog.feed(#"{"cmd":"join","conv":"c0","user":"u0","at":1}"#)
        backlog.feed(#"{"cmd":"join","conv":"c0","user":"u1","at":1}"#)
        backlog.feed(#"{"cmd":"join","conv":"c1","user":"u0","at":1}"#)
        backlog.feed(#"{"cmd":"join","conv":"c1","user":"u1","at":1}"#)
        var longest = 0
        for round in 0..<1_000 {
            let at = 2 + round * 10
            backlog.feed(#"{"cmd":"type","conv":"c0","user":"u1","at":\#(at)}"#)
            backlog.feed(#"{"cmd":"type","conv":"c1","user":"u1","at":\#(at)}"#)
            backlog.feed(#"{"cmd":"open","conv":"c0","user":"u0","thread":"t","at":\#(at + 1)}"#)
            backlog.feed(#"{"cmd":"type","conv":"c0","user":"u1","thread":"t","at":\#(at + 2)}"#)
            backlog.feed(#"{"cmd":"close","conv":"c0","user":"u0","at":\#(at + 3)}"#)
            longest = max(longest, backlog.output.backlogConvs[Identifier("u0")]?.convs.count ?? 0)
        }
        #expect(longest <= 20, "u0's list grew to \(longest) conversations, for 2")
        // Offline: the main-chat entries stay, found through the list.
        #expect(backlog.output.kept(conv: Identifier("c1"), viewer: Identifier("u0")) != nil)
        backlog.feed(#"{"cmd":"offline","user":"u0","at":20000}"#)
        #expect(backlog.output.kept(conv: Identifier("c1"), viewer: Identifier("u0")) != nil)
    }
}
