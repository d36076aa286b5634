import TypingCore
import TypingPartitioning
import TypingProtocol

/// Where a shard's events go, decided from each ``Event`` value as the engine
/// writes it: each event is encoded once (by ``JSONFormat``), straight into the
/// buffer of the subject it is published on (``Names``):
///
/// - an indicator or an announcement: its viewer's bucket, ``Names/viewerSubject(_:)``;
/// - a `typing` event: ``Names/typingSubject(_:)`` of its conversation;
/// - a reply with an id: ``Names/replySubject(_:)``; a snapshot's `member` and
///   `streak` events go with the `snapshot` event after them;
/// - a `snapshot` without id: ``Names/snapshotReplySubject(_:)``;
/// - an error without id: ``Names/errorSubject(_:)``.
///
/// What a resync answer needs (each viewer's last indicator per screen) is taken
/// from the indicator values here too, never parsed back from bytes. A screen is a
/// viewer's main screen or their side pane (Protocol.md#side-panes): the two are
/// kept apart everywhere, even when both show the same thread.
public final class ShardOutput {
    /// What happens to the events written now.
    public enum Mode: Sendable, Equatable {
        /// Published: into the subjects' buffers.
        case publish
        /// Not published (a catch-up's backlog): replies and errors are, but each
        /// indicator is kept per (conv, viewer, pane) until the catch-up ends, and
        /// so is each screen's last announcement while the screen still shows it.
        case backlog
        /// Nothing published (a snapshot's rebuild, messages an earlier owner
        /// published): indicators only go to the resync table; announcements were
        /// published by that owner.
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

    /// A screen of a viewer: (conv, thread, view, pane). The main screen and the
    /// side pane are two screens even at the same thread.
    public struct Screen: Hashable, Sendable {
        public var conv: Identifier
        public var thread: Identifier?
        public var list: Bool
        /// The viewer's side pane (Protocol.md#side-panes), not their main screen.
        public var side = false

        /// The screen an indicator is for.
        init(of indicator: Event.Indicator) {
            self.init(
                conv: indicator.conv, thread: indicator.thread, list: indicator.screen == .list,
                side: indicator.pane == .side)
        }

        /// The screen an announcement is for.
        init(of announce: Event.Announce) {
            self.init(
                conv: announce.conv, thread: announce.thread, list: announce.screen == .list,
                side: announce.pane == .side)
        }

        public init(conv: Identifier, thread: Identifier?, list: Bool, side: Bool = false) {
            self.conv = conv
            self.thread = thread
            self.list = list
            self.side = side
        }
    }

    /// An indicator kept while catching up: its screen and the event (encoded
    /// only if it is the one published at the end).
    public struct Kept {
        public var screen: Screen
        public var indicator: Event.Indicator
    }

    /// An announcement kept while catching up: its screen, the event, and its
    /// place among the announcements kept (they are published in that order).
    public struct KeptAnnouncement {
        public var screen: Screen
        public var announce: Event.Announce
        var order: Int
    }

    /// An event of a backlog line kept until the line ends (``commitLine()``).
    enum LineEvent {
        case indicator(Kept)
        case announce(Event.Announce)
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
    /// Steps for the resync table, in order, since the shard last took them:
    /// indicators written, and screens forgotten without an event (the table
    /// itself is read by the request threads).
    public var pendingShown: [ShownTable.Step] = []
    /// Where the current line's steps start in ``pendingShown`` (a forgetting
    /// that comes before the line's own indicators goes there once the line is
    /// known to be applied).
    var lineShownStart = 0
    /// ``events`` when the current line's command began (its timeouts and
    /// announcements written before it), for tests.
    var lineBeganAt = 0
    /// While catching up: the screens the backlog's lines forgot, in order, for
    /// the resync table at the end (before the kept indicators).
    var backlogForgets: [ShownTable.Forget] = []
    /// While catching up: each (conv, viewer, pane)'s last indicator. One table,
    /// one lookup per indicator; ``backlogConvs`` finds a viewer's entries.
    public var backlog: [BacklogKey: Kept] = [:]
    /// While catching up: each screen's last announcement, while the screen shows
    /// its sentence (an indicator with another text, or the screen forgotten,
    /// drops it). Published after the kept indicators at the end of the catch-up.
    public var announcements: [BacklogKey: KeptAnnouncement] = [:]
    /// The order of the next announcement kept.
    var announcementOrder = 0
    /// The conversations of each viewer's entries in ``backlog`` (maybe some
    /// whose entry is gone since, or named twice: look them up).
    var backlogConvs: [Identifier: ViewerConvs] = [:]
    /// What the current backlog line's command does to screens (``lineBegins(_:)``),
    /// nil for most commands (they change none).
    var lineChange: ScreenChange? = nil
    /// The current backlog line's indicators and announcements, in order, until
    /// ``commitLine()``: only for a line with a ``lineChange`` (the others' are
    /// kept at once).
    var lineKept: [(BacklogKey, LineEvent)] = []
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
    /// on `screen`; with `departs`, the side pane's key of the same membership
    /// forgotten too), `after` them (a viewer's entries, offline or no longer
    /// receiving typing).
    struct ScreenChange {
        var before: (key: BacklogKey, screen: Screen?)?
        var departs = false
        var after: (viewer: Identifier, offline: Bool)?
        /// Whether `before` changes a screen for the resync table too (not for a
        /// `join`: it moves no screen of a member; the catch-up's rule for it is
        /// its own caution).
        var moves = true

        /// What `before` forgets of the resync table, if anything.
        var forgetBefore: ShownTable.Forget? {
            guard moves, let (key, screen) = before else { return nil }
            return ShownTable.Forget(
                viewer: key.viewer, conv: key.conv, main: !key.side, side: key.side || departs, keep: screen)
        }

        /// What `after` forgets of the resync table, if anything: offline removes
        /// the side panes and closes the views (under `--audience members` a
        /// member's main screen goes back to the main chat); receive_typing off
        /// forgets every screen.
        func forgetAfter(audienceOpen: Bool) -> ShownTable.Forget? {
            guard let (viewer, offline) = after else { return nil }
            return ShownTable.Forget(
                viewer: viewer, conv: nil, main: true, side: true, keepMainChat: offline && !audienceOpen)
        }
    }

    /// The key of a kept backlog indicator or announcement: a viewer's screen in
    /// a conversation, the main one or the side pane.
    public struct BacklogKey: Hashable, Sendable {
        public var conv: Identifier
        public var viewer: Identifier
        /// The side pane's key, not the main screen's.
        public var side = false

        public init(conv: Identifier, viewer: Identifier, side: Bool = false) {
            self.conv = conv
            self.viewer = viewer
            self.side = side
        }
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
        if otherSubjects.count > 4096 { otherSubjects.removeAll() } // reply subjects are many and used once
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
        viewer.withUnsafeBytes { Int(TypingPartitioning.Partition.hash($0) % UInt32(buckets)) }
    }

    /// Encodes `event` where it goes (called by ``ShardFormat``).
    @inline(__always)
    func write(_ event: Event, with json: inout JSONFormat) {
        switch event {
        case .indicator(let indicator):
            indicatorEvent(indicator, event, with: &json)
        case .announce(let announce):
            announceEvent(announce, event, with: &json)
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
            let target =
                snapshot.id.map { outgoing(Self.replySubject($0)) } ?? outgoing(Names.snapshotReplySubject(partition))
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
            if mode != .publish { return } // a backlog's typing events are past
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
        let screen = Screen(of: indicator)
        switch mode {
        case .publish:
            let target = touch(bucketSubjects[bucket(of: indicator.viewer)])
            let start = target.buffer.count
            json.encode(event, into: &target.buffer)
            target.lines += 1
            events += 1
            pendingShown.append(
                .shown(ShownTable.Change(viewer: indicator.viewer, screen: screen, indicator: indicator)))
            auditCopy(from: target.buffer, start: start)
        case .backlog:
            let key = BacklogKey(conv: indicator.conv, viewer: indicator.viewer, side: screen.side)
            let kept = Kept(screen: screen, indicator: indicator)
            if lineChange == nil { keep(kept, for: key) } else { lineKept.append((key, .indicator(kept))) }
            if audit != nil {
                scratch.removeAll()
                json.encode(event, into: &scratch)
                auditCopy(from: scratch, start: 0)
            }
        case .suppress:
            pendingShown.append(
                .shown(ShownTable.Change(viewer: indicator.viewer, screen: screen, indicator: indicator)))
        case .capture:
            break
        }
    }

    /// An announcement goes where its viewer's indicators go, and is audited like
    /// them. It is an event, not a screen's state: the resync table has none.
    @inline(__always)
    func announceEvent(_ announce: Event.Announce, _ event: Event, with json: inout JSONFormat) {
        switch mode {
        case .publish:
            encode(event, into: touch(bucketSubjects[bucket(of: announce.viewer)]), with: &json)
        case .backlog:
            let key = BacklogKey(conv: announce.conv, viewer: announce.viewer, side: announce.pane == .side)
            if lineChange == nil {
                keepAnnouncement(announce, for: key)
            } else {
                lineKept.append((key, .announce(announce)))
            }
            if audit != nil {
                scratch.removeAll()
                json.encode(event, into: &scratch)
                auditCopy(from: scratch, start: 0)
            }
        case .suppress, .capture:
            break
        }
    }

    /// Starts a line: what its command will do to screens, if applied
    /// (``ScreenChange``), from the command the engine is given (never by reading
    /// the line again). Called by ``ShardLines`` in every mode but ``Mode/capture``.
    public func lineBegins(_ command: Command) {
        switch command {
        case .leave(let conv, let user), .remove(let conv, let user, _):
            lineChange = ScreenChange(before: (BacklogKey(conv: conv, viewer: user), nil), departs: true)
        case .open(let conv, let user, let thread, _, .side):
            // A side pane is a second screen; the main one is left as it is. Opened
            // elsewhere it starts from empty; opened again where it is, it keeps all.
            lineChange = ScreenChange(
                before: (
                    BacklogKey(conv: conv, viewer: user, side: true),
                    Screen(conv: conv, thread: thread, list: false, side: true)
                ))
        case .close(let conv, let user, .side):
            lineChange = ScreenChange(before: (BacklogKey(conv: conv, viewer: user, side: true), nil))
        case .open(let conv, let user, let thread, let view, _):
            lineChange = ScreenChange(
                before: (
                    BacklogKey(conv: conv, viewer: user),
                    Screen(conv: conv, thread: thread, list: view == .list)
                ))
        case .close(let conv, let user, _):
            lineChange = ScreenChange(
                before: (
                    BacklogKey(conv: conv, viewer: user),
                    audienceOpen ? nil : Screen(conv: conv, thread: nil, list: false)
                ))
        case .join(let conv, let user, _, _, _, let receiveTyping):
            lineChange = ScreenChange(
                before: (BacklogKey(conv: conv, viewer: user), Screen(conv: conv, thread: nil, list: false)),
                after: receiveTyping == false ? (user, false) : nil, moves: false)
        case .user(let user, _, _, _, let receiveTyping):
            lineChange = receiveTyping == false ? ScreenChange(after: (user, false)) : nil
        case .offline(let user):
            lineChange = ScreenChange(after: (user, true))
        case .forget(let conv, let user):
            // What the main screen was sent is forgotten (a snapshot's rebuild of
            // a `forgotten` member): it is compared from empty at the next render.
            lineChange = ScreenChange(before: (BacklogKey(conv: conv, viewer: user), nil))
        default:
            lineChange = nil
        }
        lineShownStart = pendingShown.count
        lineBeganAt = events
    }

    /// Ends a backlog line: its indicators are kept (each (conv, viewer, pane)'s
    /// last), and so are its announcements, and kept ones whose viewer is no longer
    /// on their screen are forgotten: before the line's own events for the
    /// commands that change a screen and then render (join, open, close, leave,
    /// remove), after them for those that render first (offline, a `user` or
    /// `join` turning receive_typing off). A line that was not applied (an error,
    /// or refused before the engine) changes no screen. Called by ``ShardLines``
    /// after each line the session applies in ``Mode/backlog``.
    ///
    /// In the other modes, the screens it forgets go to the resync table around
    /// the line's own indicators; in a catch-up, they wait for its end.
    public func commitLine() {
        let applied = !sawError
        sawError = false
        guard let change = lineChange else { return } // its events are kept already
        lineChange = nil
        guard mode == .backlog else {
            guard applied else { return }
            if let forget = change.forgetBefore {
                pendingShown.insert(.forget(forget), at: min(lineShownStart, pendingShown.count))
            }
            if let forget = change.forgetAfter(audienceOpen: audienceOpen) { pendingShown.append(.forget(forget)) }
            return
        }
        if applied {
            if let forget = change.forgetBefore { backlogForgets.append(forget) }
            if let forget = change.forgetAfter(audienceOpen: audienceOpen) { backlogForgets.append(forget) }
        }
        if applied, let (key, screen) = change.before {
            if let screen { moved(key, to: screen) } else { forget(key) }
            if change.departs { forget(BacklogKey(conv: key.conv, viewer: key.viewer, side: true)) }
        }
        for (key, event) in lineKept {
            switch event {
            case .indicator(let kept): keep(kept, for: key)
            case .announce(let announce): keepAnnouncement(announce, for: key)
            }
        }
        lineKept.removeAll(keepingCapacity: true)
        guard applied, let (viewer, offline) = change.after, let convs = backlogConvs[viewer]?.convs else { return }
        for conv in convs {
            // Offline removes the side panes, and so does receive_typing off (both
            // screens are forgotten); offline under --audience members leaves the
            // main chat as it is.
            forget(BacklogKey(conv: conv, viewer: viewer, side: true))
            let main = BacklogKey(conv: conv, viewer: viewer)
            if offline && !audienceOpen {
                moved(main, to: Screen(conv: conv, thread: nil, list: false))
            } else {
                forget(main)
            }
        }
        // The entries left (a viewer offline keeps those of the main chat).
        compact(viewer)
    }

    /// Keeps `kept` as the last indicator of its screen. A kept announcement of
    /// the screen stays only while the screen shows its sentence.
    @inline(__always)
    func keep(_ kept: Kept, for key: BacklogKey) {
        if !announcements.isEmpty, let announced = announcements[key],
            !announced.announce.text.utf8.elementsEqual(kept.indicator.view.text.utf8)
        {
            announcements[key] = nil
        }
        if backlog.updateValue(kept, forKey: key) == nil { named(key) }
    }

    /// Keeps `announce` as the last announcement of its screen.
    func keepAnnouncement(_ announce: Event.Announce, for key: BacklogKey) {
        announcementOrder += 1
        let kept = KeptAnnouncement(screen: Screen(of: announce), announce: announce, order: announcementOrder)
        if announcements.updateValue(kept, forKey: key) == nil && backlog[key] == nil { named(key) }
    }

    /// Names a new entry's conversation in its viewer's list.
    @inline(__always)
    func named(_ key: BacklogKey) {
        if backlogConvs[key.viewer, default: ViewerConvs()].append(key.conv) { compact(key.viewer) }
    }

    /// Leaves in `viewer`'s list only the conversations of its live entries, once each.
    func compact(_ viewer: Identifier) {
        guard let convs = backlogConvs[viewer]?.convs else { return }
        var seen = Set<Identifier>()
        let left = convs.filter { conv in
            let keys = [BacklogKey(conv: conv, viewer: viewer), BacklogKey(conv: conv, viewer: viewer, side: true)]
            return keys.contains { backlog[$0] != nil || announcements[$0] != nil } && seen.insert(conv).inserted
        }
        backlogConvs[viewer] = left.isEmpty ? nil : ViewerConvs(left)
    }

    /// Forgets the screen's entries unless they are on `screen`.
    func moved(_ key: BacklogKey, to screen: Screen) {
        if let kept = backlog[key], kept.screen != screen { backlog[key] = nil }
        if !announcements.isEmpty, let kept = announcements[key], kept.screen != screen { announcements[key] = nil }
    }

    /// Forgets the screen's entries; ``backlogConvs`` may still name them.
    func forget(_ key: BacklogKey) {
        backlog[key] = nil
        if !announcements.isEmpty { announcements[key] = nil }
    }

    /// The kept indicator of (conv, viewer)'s main screen or side pane, if any.
    public func kept(conv: Identifier, viewer: Identifier, side: Bool = false) -> Kept? {
        backlog[BacklogKey(conv: conv, viewer: viewer, side: side)]
    }

    /// The kept announcement of (conv, viewer)'s main screen or side pane, if any.
    public func keptAnnouncement(conv: Identifier, viewer: Identifier, side: Bool = false) -> KeptAnnouncement? {
        announcements[BacklogKey(conv: conv, viewer: viewer, side: side)]
    }

    /// The viewers that have kept indicators.
    public var keptViewers: Set<Identifier> { Set(backlog.keys.map(\.viewer)) }

    /// How many indicators are kept.
    public var keptCount: Int { backlog.count }

    /// Ends a catch-up: the resync table forgets the screens the backlog's lines
    /// forgot; each kept indicator goes to its viewer's subject (and the resync
    /// table), then each kept announcement, in the order they were made, as one
    /// more fetch's output. Returns how many indicators and announcements.
    public func publishBacklog() -> (indicators: Int, announcements: Int) {
        let kept = backlog
        let announced = announcements.values.sorted { $0.order < $1.order }
        backlog = [:]
        announcements = [:]
        backlogConvs = [:]
        pendingShown += backlogForgets.map { .forget($0) }
        backlogForgets = []
        for (key, value) in kept {
            let target = touch(bucketSubjects[bucket(of: key.viewer)])
            backlogJSON.encode(.indicator(value.indicator), into: &target.buffer)
            target.lines += 1
            events += 1
            pendingShown.append(
                .shown(ShownTable.Change(viewer: key.viewer, screen: value.screen, indicator: value.indicator)))
        }
        for value in announced {
            let target = touch(bucketSubjects[bucket(of: value.announce.viewer)])
            backlogJSON.encode(.announce(value.announce), into: &target.buffer)
            target.lines += 1
            events += 1
        }
        return (kept.count, announced.count)
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

}

/// What a shard's session tells its ``ShardOutput`` of each line: a catch-up
/// decides which kept indicators survive a line, and the resync table which
/// screens it forgets, from the command the engine applies (never by reading the
/// line again). The session calls it once the timeouts due by the command's time
/// have fired, so what they wrote is for the screens as they were before the line.
public struct ShardLines: LineObserver {
    let output: ShardOutput

    public init(output: ShardOutput) {
        self.output = output
    }

    public mutating func lineBegins(_ command: Command) {
        if output.mode != .capture { output.lineBegins(command) }
    }

    public mutating func lineEnded() {
        if output.mode != .capture { output.commitLine() } else { output.sawError = false }
    }
}

/// A sink that takes nothing: a shard's output never reaches the session's buffer.
public struct NoSink: ByteSink {
    public init() {}
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {}
}

/// Each viewer's last non-empty indicator per screen the viewer still has: what a
/// resync answer lists. It keeps the events; an answer encodes them. A screen the
/// engine forgets without an event (a member who leaves, a view moved or closed,
/// a side pane moved or closed, offline, receive_typing off) is forgotten here
/// too, so that an answer never shows typing on a screen that starts from empty.
public struct ShownTable: Sendable {
    var table: [Identifier: [ShardOutput.Screen: Event.Indicator]] = [:]

    /// One indicator for the table.
    public struct Change: Sendable {
        public var viewer: Identifier
        public var screen: ShardOutput.Screen
        public var indicator: Event.Indicator
    }

    /// Screens of a viewer forgotten without an event: in `conv` (nil: every
    /// conversation), main screens, side panes or both, but `keep` and, with
    /// `keepMainChat`, each conversation's main chat.
    public struct Forget: Sendable {
        public var viewer: Identifier
        public var conv: Identifier?
        public var main: Bool
        public var side: Bool
        public var keep: ShardOutput.Screen? = nil
        public var keepMainChat = false

        func forgets(_ screen: ShardOutput.Screen) -> Bool {
            guard conv.map({ screen.conv == $0 }) ?? true, screen.side ? side : main, screen != keep else {
                return false
            }
            return !(keepMainChat && !screen.side && screen.thread == nil && !screen.list)
        }
    }

    /// A step of the table, in the order the engine's lines made them.
    public enum Step: Sendable {
        case shown(Change)
        case forget(Forget)
    }

    public init() {}

    /// Applies `steps` in order.
    public mutating func apply(_ steps: [Step]) {
        for step in steps {
            switch step {
            case .shown(let change): keep(change)
            case .forget(let forget): self.forget(forget)
            }
        }
    }

    /// Forgets the screens `forget` names.
    public mutating func forget(_ forget: Forget) {
        guard let screens = table[forget.viewer] else { return }
        let left = screens.filter { !forget.forgets($0.key) }
        table[forget.viewer] = left.isEmpty ? nil : left
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
