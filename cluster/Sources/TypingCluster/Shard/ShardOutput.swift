import TypingCore
import TypingProtocol

/// Where a shard's events go, decided from each ``Event`` value as the engine
/// writes it: each event is encoded once (by ``JSONFormat``), straight into the
/// buffer of the subject it is published on (``Names``):
///
/// - an indicator: its viewer's bucket, ``Names/viewerSubject(_:)``;
/// - a `typing` event: ``Names/typingSubject(_:)`` of its conversation;
/// - a reply with an id: ``Names/replySubject(_:)``; a snapshot's `member` and
///   `streak` events go with the `snapshot` event after them;
/// - a `snapshot` without id: ``Names/snapshotReplySubject(_:)``;
/// - an error without id: ``Names/errorSubject(_:)``.
///
/// What a resync answer needs (each viewer's last indicator per screen) is taken
/// from the indicator values here too, never parsed back from bytes.
public final class ShardOutput {
    /// What happens to the events written now.
    public enum Mode: Sendable, Equatable {
        /// Published: into the subjects' buffers.
        case publish
        /// Not published (a catch-up's backlog): replies and errors are, but each
        /// indicator is kept per (conv, viewer) until the catch-up ends.
        case backlog
        /// Nothing published (a snapshot's rebuild, messages an earlier owner
        /// published): indicators only go to the resync table.
        case suppress
        /// The shard's own snapshot: `member` and `streak` events are kept as
        /// values, for ``SnapshotRebuild``; nothing is published.
        case capture
    }

    /// One subject's events of the current fetch: the lines, each ending in LF.
    public final class Outgoing {
        public let subject: String
        public var buffer = OutputBuffer(capacity: 4096)
        public var lines = 0
        /// Whether it is in ``ShardOutput/touched`` already.
        var listed = false

        init(subject: String) {
            self.subject = subject
        }
    }

    /// A screen of a viewer: (conv, thread, view).
    public struct Screen: Hashable, Sendable {
        public var conv: Identifier
        public var thread: Identifier?
        public var list: Bool
    }

    /// An indicator kept while catching up: its screen and the event (encoded
    /// only if it is the one published at the end).
    public struct Kept {
        public var screen: Screen
        public var indicator: Event.Indicator
    }

    /// The partition, for the error and snapshot subjects.
    public let partition: Int
    /// The number of viewer buckets.
    public let buckets: Int
    public var mode: Mode = .publish
    /// The subjects that have lines for the current fetch, in the order first written.
    public private(set) var touched: [Outgoing] = []
    /// Indicator subjects by bucket, and every other subject by name.
    let bucketSubjects: [Outgoing]
    var otherSubjects: [String: Outgoing] = [:]
    /// Indicators for the resync table, in order, since it was last taken
    /// (``takeShown()``): the table itself is read by the request threads.
    public var pendingShown: [ShownTable.Change] = []
    /// While catching up: each (conv, viewer)'s last indicator. One table, one
    /// lookup per indicator; ``backlogConvs`` finds a viewer's entries.
    public var backlog: [BacklogKey: Kept] = [:]
    /// The conversations of each viewer's entries in ``backlog`` (maybe some
    /// whose entry is gone since, or named twice: look them up).
    var backlogConvs: [Identifier: ViewerConvs] = [:]
    /// What the current backlog line's command does to screens (``lineBegins(_:)``),
    /// nil for most commands (they change none).
    var lineChange: ScreenChange? = nil
    /// The current backlog line's indicators, until ``commitLine()``: only for a
    /// line with a ``lineChange`` (the others' go to ``backlog`` at once).
    var lineKept: [(BacklogKey, Kept)] = []
    /// Where a backlog indicator is encoded for the audit.
    var scratch = OutputBuffer(capacity: 1024)
    /// Encodes the backlog's kept indicators at the end of a catch-up.
    var backlogJSON = JSONFormat()
    /// A snapshot's member and streak lines, until its `snapshot` event names their subject.
    var snapshotParts = OutputBuffer(capacity: 4096)
    var snapshotPartLines = 0
    /// The shard's own snapshot (``Mode/capture``).
    public var capturedMembers: [Event.Member] = []
    public var capturedStreaks: [Event.Streak] = []
    public var capturedAt = 0
    /// Whether an `error` event was written since this was last cleared (a
    /// catch-up's line that was not applied changes no screen).
    public var sawError = false
    /// The events written in the current fetch, for the audit: each line after
    /// ``auditPrefix`` (nil: no audit).
    public var audit: OutputBuffer?
    public var auditPrefix: [UInt8] = []
    /// Events published (counted at encoding).
    public var events = 0
    /// typingd's `--audience open` (a closed view receives nothing): the backlog's
    /// rule for `close` and `offline` depends on it.
    public var audienceOpen = false

    /// A viewer's list in ``backlogConvs``. An entry forgotten (a viewer moving
    /// to another screen) stays named; kept again, it is named once more: past
    /// `limit` the list is compacted to the live entries, and the limit set to
    /// twice their number (at least 16), so that a viewer forgotten and kept again
    /// all through a catch-up keeps a short list, for O(1) work per entry kept.
    struct ViewerConvs {
        var convs: [Identifier]
        var limit: Int

        init(_ convs: [Identifier] = []) {
            self.convs = convs
            limit = max(16, 2 * convs.count)
        }

        /// Names `conv`; true when the list is past its limit.
        mutating func append(_ conv: Identifier) -> Bool {
            convs.append(conv)
            return convs.count > limit
        }
    }

    /// What a command does to the kept indicators' screens, if it is applied:
    /// `before` its own indicators (a key forgotten, or forgotten unless it is
    /// on `screen`), `after` them (a viewer's entries, offline or no longer
    /// receiving typing).
    struct ScreenChange {
        var before: (key: BacklogKey, screen: Screen?)?
        var after: (viewer: Identifier, offline: Bool)?
    }

    /// The key of a kept backlog indicator.
    public struct BacklogKey: Hashable, Sendable {
        public var conv: Identifier
        public var viewer: Identifier
    }

    public init(partition: Int, buckets: Int, audit: Bool = false) {
        self.partition = partition
        self.buckets = max(1, buckets)
        bucketSubjects = (0..<max(1, buckets)).map { Outgoing(subject: Names.viewerSubject($0)) }
        if audit { self.audit = OutputBuffer(capacity: 1 << 16) }
    }

    /// The subject's buffer, listed as touched.
    @inline(__always)
    func outgoing(_ subject: String) -> Outgoing {
        if let known = otherSubjects[subject] { return touch(known) }
        let made = Outgoing(subject: subject)
        otherSubjects[subject] = made
        return touch(made)
    }

    @inline(__always)
    func touch(_ outgoing: Outgoing) -> Outgoing {
        if !outgoing.listed {
            outgoing.listed = true
            touched.append(outgoing)
        }
        return outgoing
    }

    /// Empties every subject's buffer (after they were published).
    public func clearTouched() {
        for outgoing in touched {
            outgoing.buffer.removeAll()
            outgoing.lines = 0
            outgoing.listed = false
        }
        touched.removeAll(keepingCapacity: true)
        if otherSubjects.count > 4096 { otherSubjects.removeAll() }   // reply subjects are many and used once
    }

    /// The subject of a reply to `id`.
    static func replySubject(_ id: Request.ID) -> String {
        switch id {
        case .string(let text): return Names.replySubject(text)
        case .integer(let number): return Names.replySubject(number: number)
        }
    }

    /// The bucket of a viewer.
    @inline(__always)
    func bucket(of viewer: Identifier) -> Int {
        viewer.withUnsafeBytes { Int(TypingProtocol.Partition.hash($0) % UInt32(buckets)) }
    }

    /// Encodes `event` where it goes (called by ``ShardFormat``).
    @inline(__always)
    func write(_ event: Event, with json: inout JSONFormat) {
        switch event {
        case .indicator(let indicator):
            indicatorEvent(indicator, event, with: &json)
        case .announce:
            // Shards run without --announce-after-ms: the cluster has no announcements yet.
            break
        case .member(let member):
            if mode == .capture { capturedMembers.append(member); return }
            if mode != .publish && mode != .backlog { return }
            json.encode(event, into: &snapshotParts)
            snapshotPartLines += 1
        case .streak(let streak):
            if mode == .capture { capturedStreaks.append(streak); return }
            if mode != .publish && mode != .backlog { return }
            json.encode(event, into: &snapshotParts)
            snapshotPartLines += 1
        case .snapshot(let snapshot):
            if mode == .capture { capturedAt = snapshot.at; return }
            if mode != .publish && mode != .backlog { return }
            let target = snapshot.id.map { outgoing(Self.replySubject($0)) } ?? outgoing(Names.snapshotReplySubject(partition))
            if snapshotPartLines > 0 {
                let start = target.buffer.count
                snapshotParts.withBytes { target.buffer.append($0) }
                target.lines += snapshotPartLines
                events += snapshotPartLines
                auditCopy(from: target.buffer, start: start)
                snapshotParts.removeAll()
                snapshotPartLines = 0
            }
            encode(event, into: target, with: &json)
        case .typing(let typing):
            if mode != .publish { return }   // a backlog's typing events are past
            encode(event, into: outgoing(Names.typingSubject(typing.conv.string)), with: &json)
        case .error(let error):
            sawError = true
            if mode != .publish && mode != .backlog { return }
            let subject = error.id.map(Self.replySubject) ?? Names.errorSubject(partition)
            encode(event, into: outgoing(subject), with: &json)
        case .ok(let ok):
            if mode != .publish && mode != .backlog { return }
            encode(event, into: outgoing(Self.replySubject(ok.id)), with: &json)
        case .state(let state):
            if mode != .publish && mode != .backlog { return }
            let subject = state.id.map(Self.replySubject) ?? Names.errorSubject(partition)
            encode(event, into: outgoing(subject), with: &json)
        case .stats(let stats):
            if mode != .publish && mode != .backlog { return }
            let subject = stats.id.map(Self.replySubject) ?? Names.errorSubject(partition)
            encode(event, into: outgoing(subject), with: &json)
        }
    }

    @inline(__always)
    func encode(_ event: Event, into target: Outgoing, with json: inout JSONFormat) {
        let start = target.buffer.count
        json.encode(event, into: &target.buffer)
        target.lines += 1
        events += 1
        auditCopy(from: target.buffer, start: start)
    }

    /// Copies the lines from `start` of `buffer` into the audit, each after the prefix.
    @inline(__always)
    func auditCopy(from buffer: borrowing OutputBuffer, start: Int) {
        guard audit != nil else { return }
        buffer.withBytes { bytes in
            var lineStart = start
            var index = start
            while index < bytes.count {
                if bytes[index] == 0x0A {
                    auditPrefix.withUnsafeBytes { audit!.append($0) }
                    audit!.append(UnsafeRawBufferPointer(rebasing: bytes[lineStart...index]))
                    lineStart = index + 1
                }
                index += 1
            }
        }
    }

    @inline(__always)
    func indicatorEvent(_ indicator: Event.Indicator, _ event: Event, with json: inout JSONFormat) {
        let screen = Screen(conv: indicator.conv, thread: indicator.thread, list: indicator.screen == .list)
        switch mode {
        case .publish:
            let target = touch(bucketSubjects[bucket(of: indicator.viewer)])
            let start = target.buffer.count
            json.encode(event, into: &target.buffer)
            target.lines += 1
            events += 1
            pendingShown.append(ShownTable.Change(viewer: indicator.viewer, screen: screen, indicator: indicator))
            auditCopy(from: target.buffer, start: start)
        case .backlog:
            let key = BacklogKey(conv: indicator.conv, viewer: indicator.viewer)
            let kept = Kept(screen: screen, indicator: indicator)
            if lineChange == nil { keep(kept, for: key) } else { lineKept.append((key, kept)) }
            if audit != nil {
                scratch.removeAll()
                json.encode(event, into: &scratch)
                auditCopy(from: scratch, start: 0)
            }
        case .suppress:
            pendingShown.append(ShownTable.Change(viewer: indicator.viewer, screen: screen, indicator: indicator))
        case .capture:
            break
        }
    }

    /// Starts a backlog line: what its command will do to screens, if applied
    /// (``ScreenChange``), from the command the engine is given (never by reading
    /// the line again). Called by ``ShardFormat`` in ``Mode/backlog``.
    public func lineBegins(_ command: Command) {
        switch command {
        case .leave(let conv, let user), .remove(let conv, let user, _):
            lineChange = ScreenChange(before: (BacklogKey(conv: conv, viewer: user), nil))
        case .open(_, _, _, _, .side), .close(_, _, .side):
            // A side pane is a second screen; the main one is left as it is.
            lineChange = nil
        case .open(let conv, let user, let thread, let view, _):
            lineChange = ScreenChange(before: (BacklogKey(conv: conv, viewer: user),
                                               Screen(conv: conv, thread: thread, list: view == .list)))
        case .close(let conv, let user, _):
            lineChange = ScreenChange(before: (BacklogKey(conv: conv, viewer: user),
                                               audienceOpen ? nil : Screen(conv: conv, thread: nil, list: false)))
        case .join(let conv, let user, _, _, _, let receiveTyping):
            lineChange = ScreenChange(before: (BacklogKey(conv: conv, viewer: user), Screen(conv: conv, thread: nil, list: false)),
                                      after: receiveTyping == false ? (user, false) : nil)
        case .user(let user, _, _, _, let receiveTyping):
            lineChange = receiveTyping == false ? ScreenChange(after: (user, false)) : nil
        case .offline(let user):
            lineChange = ScreenChange(after: (user, true))
        default:
            lineChange = nil
        }
    }

    /// Ends a backlog line: its indicators are kept (each (conv, viewer)'s last),
    /// and kept ones whose viewer is no longer on their screen are forgotten: before
    /// the line's own indicators for the commands that change a screen and then
    /// render (join, open, close, leave, remove), after them for those that render
    /// first (offline, a `user` or `join` turning receive_typing off). A line that
    /// was not applied (an error, or refused before the engine) changes no screen.
    /// Called by ``ShardFormat`` after each line the session applies in ``Mode/backlog``.
    public func commitLine() {
        let applied = !sawError
        sawError = false
        guard let change = lineChange else { return }   // its indicators are kept already
        lineChange = nil
        if applied, let (key, screen) = change.before {
            if let screen { moved(key, to: screen) } else { forget(key) }
        }
        for (key, kept) in lineKept { keep(kept, for: key) }
        lineKept.removeAll(keepingCapacity: true)
        guard applied, let (viewer, offline) = change.after, let convs = backlogConvs[viewer]?.convs else { return }
        if offline && !audienceOpen {
            for conv in convs { moved(BacklogKey(conv: conv, viewer: viewer), to: Screen(conv: conv, thread: nil, list: false)) }
        } else {
            for conv in convs { backlog[BacklogKey(conv: conv, viewer: viewer)] = nil }
        }
        // The entries left (a viewer offline keeps those of the main chat).
        compact(viewer)
    }

    /// Keeps `kept` as (conv, viewer)'s last indicator.
    @inline(__always)
    func keep(_ kept: Kept, for key: BacklogKey) {
        if backlog.updateValue(kept, forKey: key) == nil,
           backlogConvs[key.viewer, default: ViewerConvs()].append(key.conv) {
            compact(key.viewer)
        }
    }

    /// Leaves in `viewer`'s list only the conversations of its live entries, once each.
    func compact(_ viewer: Identifier) {
        guard let convs = backlogConvs[viewer]?.convs else { return }
        var seen = Set<Identifier>()
        let left = convs.filter { backlog[BacklogKey(conv: $0, viewer: viewer)] != nil && seen.insert($0).inserted }
        backlogConvs[viewer] = left.isEmpty ? nil : ViewerConvs(left)
    }

    func moved(_ key: BacklogKey, to screen: Screen) {
        if let kept = backlog[key], kept.screen != screen { forget(key) }
    }

    /// Forgets (conv, viewer)'s entry; ``backlogConvs`` may still name it.
    func forget(_ key: BacklogKey) {
        backlog[key] = nil
    }

    /// The kept indicator of (conv, viewer), if any.
    public func kept(conv: Identifier, viewer: Identifier) -> Kept? { backlog[BacklogKey(conv: conv, viewer: viewer)] }

    /// The viewers that have kept indicators.
    public var keptViewers: Set<Identifier> { Set(backlog.keys.map(\.viewer)) }

    /// How many indicators are kept.
    public var keptCount: Int { backlog.count }

    /// Ends a catch-up: each kept indicator goes to its viewer's subject (and the
    /// resync table), as one more fetch's output. Returns how many.
    public func publishBacklog() -> Int {
        let kept = backlog
        backlog = [:]
        backlogConvs = [:]
        for (key, value) in kept {
            let target = touch(bucketSubjects[bucket(of: key.viewer)])
            backlogJSON.encode(.indicator(value.indicator), into: &target.buffer)
            target.lines += 1
            events += 1
            pendingShown.append(ShownTable.Change(viewer: key.viewer, screen: value.screen, indicator: value.indicator))
        }
        return kept.count
    }
}

/// The format a shard's session writes with: the protocol's JSON, each event
/// encoded into its subject's buffer by ``ShardOutput`` (the session's own
/// buffer stays empty).
public struct ShardFormat: EventFormat, ~Copyable {
    var json = JSONFormat()
    let output: ShardOutput

    public init(output: ShardOutput) {
        self.output = output
    }

    public mutating func encode(_ event: Event, into buffer: inout OutputBuffer) {
        output.write(event, with: &json)
    }

    public static var observesLines: Bool { true }

    /// A catch-up decides which kept indicators survive a line from the command
    /// the engine applies (never by reading the line again).
    public mutating func lineBegins(_ command: Command) {
        if output.mode == .backlog { output.lineBegins(command) }
    }

    public mutating func lineEnded() {
        if output.mode == .backlog { output.commitLine() } else { output.sawError = false }
    }
}

/// A sink that takes nothing: a shard's output never reaches the session's buffer.
public struct NoSink: ByteSink {
    public init() {}
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {}
}

/// Each viewer's last non-empty indicator per screen: what a resync answer lists.
/// It keeps the events; an answer encodes them.
public struct ShownTable: Sendable {
    var table: [Identifier: [ShardOutput.Screen: Event.Indicator]] = [:]

    /// One indicator for the table.
    public struct Change: Sendable {
        public var viewer: Identifier
        public var screen: ShardOutput.Screen
        public var indicator: Event.Indicator
    }

    public init() {}

    /// Applies `changes` in order.
    public mutating func apply(_ changes: [Change]) {
        for change in changes { keep(change) }
    }

    /// Keeps the indicator as its viewer's on its screen (an empty one clears it).
    public mutating func keep(_ change: Change) {
        if change.indicator.view.typerCount == 0 {
            guard table[change.viewer] != nil else { return }
            table[change.viewer]?[change.screen] = nil
            if table[change.viewer]?.isEmpty == true { table[change.viewer] = nil }
        } else {
            table[change.viewer, default: [:]][change.screen] = change.indicator
        }
    }

    /// The viewer's indicators, one line each (without LF).
    public func of(_ viewer: String) -> [[UInt8]] {
        guard let screens = table[Identifier(viewer)] else { return [] }
        var json = JSONFormat()
        return screens.values.map { indicator in
            var buffer = OutputBuffer(capacity: 512)
            json.encode(.indicator(indicator), into: &buffer)
            return buffer.withBytes { Array($0.dropLast()) }
        }
    }

    public var viewers: Int { table.count }
}
