import Testing
import TypingCore
import TypingTestSupport

/// Protocol.md's rules written again as plainly as they read, with no cleverness: every
/// render recomputes every screen's indicator from scratch (its location, the typers
/// there, their order, the phrase in English) and writes exactly where it differs from
/// what that screen was last sent. Compared event for event with the engine over random
/// transcripts, it checks what the invariant checker cannot: which conversations a
/// command renders, and when (Protocol.md#who-sees-what), not only that every viewer's
/// state is right afterwards.
///
/// Protocol v4 is here too, written from its spec page: a member's two screens, the
/// main one and the side pane (Protocol.md#side-panes); quiet rooms
/// (Protocol.md#quiet-large-rooms) and the several phrase (Protocol.md#several-people);
/// status words, in the phrase and the streak rules (Protocol.md#status-in-ones-own-words);
/// announcements (Protocol.md#announcements-for-screen-readers), each screen with its
/// own pending one and last announced text, the due ones found by looking at every screen.
struct ReferenceModel {
    /// A rule of the model broken on purpose: the model with a mutant must disagree
    /// with the engine somewhere (ReferenceModelV4Tests' self-test), which shows that
    /// the comparison notices when that rule is broken.
    enum Mutant: String, CaseIterable, Sendable {
        /// Pane separation: the side pane shows the main screen's location, not its thread.
        case sidePaneShowsMainLocation
        /// Pane streak rule: an `open` stops the streak unless the *opened* pane shows it
        /// (the other pane is not asked).
        case openAsksOnlyOpenedPane
        /// Quiet rule: rooms of N members are quiet already (≥ instead of >).
        case quietAtN
        /// Several rule: a clause of exactly K typers is several already.
        case severalAtK
        /// Status phrase: status typers with the same words share one clause.
        case statusGrouped
        /// Status streak: a keystroke with other words keeps the first ones.
        case statusWordsKept
        /// Status timeout: a status keystroke's `timeout_ms` is ignored (the default applies).
        case statusIgnoresTimeoutMs
        /// Announce timing: a later indicator does not push a pending announcement back.
        case announceNotPostponed
        /// Announce timing: announcements due at a timeout's time fire before it.
        case announceBeforeTimeouts
        /// Announce dedup: a screen announces again the text it last announced.
        case announceRepeats
        /// Announce dedup: the empty indicator leaves the last announced text as it was.
        case announcedKeptAfterEmpty
        /// Announce forgetting: a forgotten screen keeps its last announced text.
        case announcedKeptWhenForgotten
    }

    struct User {
        var name: String?
        var sendsTyping = true
        var receives = true
        var locale: String?
        /// Conversations in the order the user joined them.
        var memberships: [String] = []
    }

    /// What one screen was last sent, and its announcements
    /// (Protocol.md#announcements-for-screen-readers). A forgotten screen is `Screen()`.
    struct Screen {
        /// What the screen was last sent, as ``ReferenceModel/content(at:in:viewer:list:)`` says it.
        var lastSent = ReferenceModel.emptyContent
        /// The text of that indicator.
        var lastText = ""
        /// When the pending announcement fires (nil: none).
        var announceAt: Int?
        /// When its indicator was written, counted over all screens (for ties).
        var announceRank = 0
        /// The text last announced ("" at first, and after an empty indicator).
        var announced = ""
    }

    struct Member {
        var user: String
        var open = false
        /// The thread the main screen shows (nil: the main timeline).
        var thread: String?
        var isList = false
        var main = Screen()
        /// The thread of the side pane (nil: none).
        var side: String?
        var sideScreen = Screen()
    }

    struct Streak {
        var conv: String
        var user: String
        var thread: String?
        var activity: Activity
        /// The status words (with activity status only).
        var status: String?
        var deadline: Int
        var keystroke: Int
        var started: Int
    }

    static let emptyContent = "[] "
    static let maxTime = (1 << 53) - 1

    let configuration: EngineConfiguration
    let mutant: Mutant?
    var users: [String: User] = [:]
    /// Members of each conversation, in join order.
    var conversations: [String: [Member]] = [:]
    /// Live streaks, in the order they began.
    var streaks: [Streak] = []
    var now = 0
    var keystrokes = 0
    /// Indicators written, for the order of announcements due at the same time.
    var written = 0
    /// What the current step wrote, in ``Harness/describe(_:)``'s form.
    var out: [String] = []

    init(_ configuration: EngineConfiguration, mutant: Mutant? = nil) {
        self.configuration = configuration
        self.mutant = mutant
    }

    // MARK: Names and phrases

    /// The display name (Protocol.md#display-names); nil: unnamed.
    static func displayName(_ raw: String?) -> String? {
        guard let raw else { return nil }
        let scalars = raw.unicodeScalars.filter { !($0.value <= 0x1F || (0x7F...0x9F).contains($0.value)) }
        var cleaned = String(String.UnicodeScalarView(scalars))
        cleaned = trimmed(cleaned)
        if cleaned.isEmpty { return nil }
        if cleaned.count <= 15 { return cleaned }
        return trimmed(String(cleaned.prefix(15))) + "..."
    }

    static func trimmed(_ text: String) -> String {
        var scalars = Array(text.unicodeScalars)
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(String.UnicodeScalarView(scalars))
    }

    func display(_ user: String) -> String? { Self.displayName(users[user]?.name) }

    static let verbs: [Activity: (String, String)] = [
        .typing: ("is typing", "are typing"),
        .recordingAudio: ("is recording audio", "are recording audio"),
        .recordingVideo: ("is recording video", "are recording video"),
        .sendingPhoto: ("is sending a photo", "are sending photos"),
        .sendingVideo: ("is sending a video", "are sending videos"),
        .sendingFile: ("is sending a file", "are sending files"),
        .sharingLocation: ("is sharing a location", "are sharing locations")
    ]

    /// The clause for typers (in order, named first; Protocol.md#phrases), with their
    /// activity's verb (Protocol.md#activities-recording-sending-sharing), or, for
    /// one status typer, their words (Protocol.md#status-in-ones-own-words). More
    /// than `--several-after` typers are "Several people" (Protocol.md#several-people).
    func clause(_ typers: [Streak], style: EngineConfiguration.Style) -> String {
        let n = typers.count
        let named = typers.filter { display($0.user) != nil }.count
        let slots = style == .group ? (n <= 3 ? n : 2) : (n <= 2 ? n : 1)
        let s = min(slots, named)
        let r = n - s
        let names = typers.prefix(s).map { display($0.user) ?? "?" }
        let several = configuration.severalAfter.map { mutant == .severalAtK ? n >= $0 : n > $0 } ?? false
        let subject: String
        switch (s, r) {
        case _ where several: subject = "Several people"
        case (0, 1): subject = "Someone"
        case (0, _): subject = "\(r) people"
        case (1, 0): subject = names[0]
        case (1, 1): subject = "\(names[0]) and someone else"
        case (1, _): subject = "\(names[0]) and \(r) others"
        case (2, 0): subject = "\(names[0]) and \(names[1])"
        case (2, 1): subject = "\(names[0]), \(names[1]), and someone else"
        case (2, _): subject = "\(names[0]), \(names[1]), and \(r) others"
        default: subject = "\(names[0]), \(names[1]), and \(names[2])"
        }
        if let words = typers[0].status { return subject + " " + words }
        let verb = Self.verbs[typers[0].activity] ?? ("?", "?")
        return subject + " " + (n == 1 ? verb.0 : verb.1)
    }

    /// The typers of `conv` at `thread` in the configured order, named first.
    func typers(of conv: String, at thread: String?, excluding viewer: String?) -> [Streak] {
        let here = streaks.filter { $0.conv == conv && $0.thread == thread && $0.user != viewer }
        return here.sorted { a, b in
            let na = display(a.user), nb = display(b.user)
            if (na != nil) != (nb != nil) { return na != nil }
            switch configuration.order {
            case .start: return a.started < b.started
            case .recent: return a.keystroke > b.keystroke
            case .name:
                if let na, let nb, !Array(na.unicodeScalars.map(\.value)).elementsEqual(nb.unicodeScalars.map(\.value))
                {
                    return na.unicodeScalars.map(\.value).lexicographicallyPrecedes(nb.unicodeScalars.map(\.value))
                }
                return Array(a.user.utf8).lexicographicallyPrecedes(Array(b.user.utf8))
            }
        }
    }

    /// What `viewer`'s screen at `thread` of `conv` shows, as `[ids]{activities} more N text`,
    /// and its text alone.
    func content(at thread: String?, in conv: String, viewer: String, list: Bool) -> (String, text: String) {
        let typers = typers(of: conv, at: thread, excluding: viewer)
        guard !typers.isEmpty else { return (Self.emptyContent, "") }
        let listed = Array(typers.prefix(configuration.maxListed))
        let more = typers.count - listed.count
        var groups: [(Activity, [Streak])] = []
        for typer in typers {
            // A status typer is a clause of their own.
            let grouped = typer.activity != .status || mutant == .statusGrouped
            if grouped,
                let index = groups.firstIndex(where: { $0.0 == typer.activity && $0.1[0].status == typer.status })
            {
                groups[index].1.append(typer)
            } else {
                groups.append((typer.activity, [typer]))
            }
        }
        let style = list ? configuration.listStyle : configuration.style
        let text = groups.map { clause($0.1, style: style) }.joined(separator: "; ") + "..."
        let activities =
            listed.contains { $0.activity != .typing }
            ? " {\(listed.map(\.activity.name).joined(separator: ","))}" : ""
        return (
            "[\(listed.map(\.user).joined(separator: ","))]\(activities)\(more > 0 ? " more \(more)" : "") \(text)",
            text
        )
    }

    // MARK: Steps

    func place(_ conv: String, _ thread: String?) -> String { thread.map { "\(conv)#\($0)" } ?? conv }

    /// Whether the room is quiet (Protocol.md#quiet-large-rooms).
    func quiet(_ conv: String) -> Bool {
        guard let limit = configuration.quietAbove else { return false }
        let count = conversations[conv]?.count ?? 0
        return mutant == .quietAtN ? count >= limit : count > limit
    }

    /// Compares every screen of `conv`: viewers in join order, for each the main
    /// screen, then the side pane.
    mutating func render(_ conv: String) {
        guard var members = conversations[conv] else { return }
        let quiet = quiet(conv)
        for index in members.indices {
            let member = members[index]
            guard users[member.user]?.receives == true else { continue }
            if configuration.audience == .members || member.open {
                show(
                    &members[index].main, conv, at: member.thread, shown: member.thread, viewer: member.user,
                    label: member.isList ? "(list)" : "", list: member.isList, quiet: quiet)
            }
            if let side = member.side {
                show(
                    &members[index].sideScreen, conv, at: side,
                    shown: mutant == .sidePaneShowsMainLocation ? member.thread : side, viewer: member.user,
                    label: "(side)", list: false, quiet: quiet)
            }
        }
        conversations[conv] = members
    }

    /// Writes an indicator to `screen` (at `thread`, showing the typers at `shown`)
    /// where it differs from what the screen was last sent; an indicator with text
    /// sets its pending announcement, the empty one cancels it.
    mutating func show(
        _ screen: inout Screen, _ conv: String, at thread: String?, shown: String?, viewer: String,
        label: String, list: Bool, quiet: Bool
    ) {
        let (now, text) = quiet ? (Self.emptyContent, "") : content(at: shown, in: conv, viewer: viewer, list: list)
        // Bytes, not String's ==, which holds "Zoë" in NFC and NFD equal.
        guard !now.utf8.elementsEqual(screen.lastSent.utf8) else { return }
        screen.lastSent = now
        screen.lastText = text
        out.append("@\(self.now) \(place(conv, thread)) \(viewer)\(label): \(now)")
        guard let after = configuration.announceAfter else { return }
        written += 1
        if text.isEmpty {
            screen.announceAt = nil
            if mutant != .announcedKeptAfterEmpty { screen.announced = "" }
        } else if mutant != .announceNotPostponed || screen.announceAt == nil {
            screen.announceAt = min(self.now + after, Self.maxTime)
            screen.announceRank = written
        }
    }

    /// A screen forgotten without an event: compared from the empty indicator next
    /// time, its announcements gone.
    func forgotten(_ screen: Screen) -> Screen {
        var fresh = Screen()
        if mutant == .announcedKeptWhenForgotten { fresh.announced = screen.announced }
        return fresh
    }

    mutating func typingEvent(_ streak: Streak, _ state: String, _ extra: String = "") {
        guard configuration.typingEvents else { return }
        out.append("@\(now) \(place(streak.conv, streak.thread)) \(streak.user) \(state)\(extra)")
    }

    mutating func stop(_ index: Int, reason: String) {
        let streak = streaks.remove(at: index)
        typingEvent(streak, "stopped", " \(reason)")
    }

    mutating func start(
        _ conv: String, _ user: String, thread: String?, activity: Activity, status: String?, timeout: Int?
    ) {
        keystrokes += 1
        let streak = Streak(
            conv: conv, user: user, thread: thread, activity: activity, status: status,
            deadline: deadline(timeout, activity), keystroke: keystrokes, started: keystrokes)
        streaks.append(streak)
        typingEvent(streak, "started", (activity == .typing ? "" : " \(activity.name)") + Self.quoted(status))
    }

    static func quoted(_ status: String?) -> String { status.map { " \"\($0)\"" } ?? "" }

    func deadline(_ timeout: Int?, _ activity: Activity) -> Int {
        let given = mutant == .statusIgnoresTimeoutMs && activity == .status ? nil : timeout
        let timeout = (given ?? configuration.timeout).clamped(to: EngineConfiguration.timeoutRange)
        return min(now + timeout, Self.maxTime)
    }

    func streakIndex(_ conv: String, _ user: String) -> Int? {
        streaks.firstIndex { $0.conv == conv && $0.user == user }
    }

    func memberIndex(_ conv: String, _ user: String) -> Int? {
        conversations[conv]?.firstIndex { $0.user == user }
    }

    /// The pending announcement that fires first by `time`: the earliest, then the
    /// one whose indicator was written first. Every screen is looked at.
    func dueAnnouncement(by time: Int) -> (conv: String, index: Int, side: Bool, at: Int)? {
        var best: (conv: String, index: Int, side: Bool, at: Int, rank: Int)?
        for (conv, members) in conversations {
            for (index, member) in members.enumerated() {
                for (side, screen) in [(false, member.main), (true, member.sideScreen)] {
                    guard let at = screen.announceAt, at <= time else { continue }
                    if let current = best, (current.at, current.rank) < (at, screen.announceRank) { continue }
                    best = (conv, index, side, at, screen.announceRank)
                }
            }
        }
        return best.map { ($0.conv, $0.index, $0.side, $0.at) }
    }

    /// Timeouts and announcements due by `time`, one step each, in time order; at
    /// the same time, timeouts (by keystroke) first, then announcements.
    mutating func advance(to time: Int) {
        while true {
            let timeout = streaks.indices.filter { streaks[$0].deadline <= time }
                .min { (streaks[$0].deadline, streaks[$0].keystroke) < (streaks[$1].deadline, streaks[$1].keystroke) }
            let announcement = dueAnnouncement(by: time)
            let announceFirst =
                mutant == .announceBeforeTimeouts
                ? { (a: Int, t: Int) in a <= t } : { (a: Int, t: Int) in a < t }
            if let index = timeout, announcement.map({ !announceFirst($0.at, streaks[index].deadline) }) ?? true {
                now = streaks[index].deadline
                let conv = streaks[index].conv
                stop(index, reason: "timeout")
                render(conv)
            } else if let announcement {
                now = announcement.at
                announce(announcement.conv, announcement.index, side: announcement.side)
            } else {
                break
            }
        }
        now = time
    }

    /// A pending announcement fires: the screen's text, unless it is what it last announced.
    mutating func announce(_ conv: String, _ index: Int, side: Bool) {
        guard let member = conversations[conv]?[index] else { return }
        var screen = side ? member.sideScreen : member.main
        screen.announceAt = nil
        if !screen.lastText.isEmpty
            && (mutant == .announceRepeats || !screen.lastText.utf8.elementsEqual(screen.announced.utf8))
        {
            let label = side ? "(side)" : member.isList ? "(list)" : ""
            out.append(
                "announce @\(now) \(place(conv, side ? member.side : member.thread)) \(member.user)\(label): \(screen.lastText)"
            )
            screen.announced = screen.lastText
        }
        if side { conversations[conv]?[index].sideScreen = screen } else { conversations[conv]?[index].main = screen }
    }

    /// The end of input: every timeout and announcement left fires.
    mutating func drain() -> [String] {
        out = []
        advance(to: Self.maxTime)
        return out
    }

    /// Whether `member`'s main screen shows `location` (a chat, open or closed; a
    /// list shows none) (Protocol.md#side-panes).
    static func mainShows(_ member: Member, _ location: String?) -> Bool {
        !member.isList && member.thread == location
    }

    static func sideShows(_ member: Member, _ location: String?) -> Bool {
        member.side != nil && member.side == location
    }

    /// Closes a view as `close` does, writing nothing.
    mutating func closeView(_ conv: String, _ index: Int) {
        guard var member = conversations[conv]?[index], member.open else { return }
        let changed = member.thread != nil || member.isList
        member.open = false
        member.thread = nil
        member.isList = false
        if configuration.audience == .open || changed { member.main = forgotten(member.main) }
        conversations[conv]?[index] = member
    }

    mutating func setting(_ user: String, name: String?, sendTyping: Bool?) -> (renamed: Bool, hides: Bool) {
        var renamed = false, hides = false
        if let name {
            let new = Self.displayName(name), old = display(user)
            renamed = (new == nil) != (old == nil) || !(new ?? "").utf8.elementsEqual((old ?? "").utf8)
            users[user]?.name = name
        }
        if let sendTyping {
            hides = !sendTyping && users[user]?.sendsTyping == true
            users[user]?.sendsTyping = sendTyping
        }
        return (renamed, hides)
    }

    /// The streak visits of a rename or of hiding (Protocol.md#user-settings): all of
    /// the user's streaks but in `except`.
    mutating func visitStreaks(_ user: String, except: String?, hides: Bool) {
        for streak in streaks where streak.user == user && streak.conv != except {
            if hides, let index = streaks.firstIndex(where: { $0.conv == streak.conv && $0.user == user }) {
                stop(index, reason: "hidden")
            }
            render(streak.conv)
        }
    }

    mutating func viewSettings(_ user: String, locale: String?, receive: Bool?) -> Bool {
        var changed = false
        if let locale {
            if users[user]?.locale?.lowercased() != locale.lowercased() {
                users[user]?.locale = locale
                changed = true
            }
        }
        if let receive, users[user]?.receives != receive {
            users[user]?.receives = receive
            changed = true
            // Both screens are forgotten (the side pane stays set).
            for conv in users[user]?.memberships ?? [] {
                if let index = memberIndex(conv, user), var member = conversations[conv]?[index] {
                    member.main = forgotten(member.main)
                    member.sideScreen = forgotten(member.sideScreen)
                    conversations[conv]?[index] = member
                }
            }
        }
        return changed
    }

    mutating func visitViews(_ user: String, except: String?) {
        for conv in users[user]?.memberships ?? [] where conv != except { render(conv) }
    }

    mutating func notMember(_ line: Int) { out.append("error \(line) not_member") }

    /// One request: timeouts and announcements first, then the command.
    mutating func apply(_ command: Command, at: Int?, line: Int) -> [String] {
        out = []
        advance(to: at ?? now)
        switch command {
        case let .join(conv, user, name, sendTyping, locale, receiveTyping):
            let conv = conv.string, user = user.string
            if users[user] == nil { users[user] = User() }
            if memberIndex(conv, user) == nil {
                conversations[conv, default: []].append(Member(user: user))
                users[user]?.memberships.append(conv)
            }
            let (renamed, hides) = setting(user, name: name, sendTyping: sendTyping)
            if renamed || hides { visitStreaks(user, except: conv, hides: hides) }
            if viewSettings(user, locale: locale, receive: receiveTyping) { visitViews(user, except: conv) }
            if hides, let index = streakIndex(conv, user) { stop(index, reason: "hidden") }
            render(conv)
        case let .type(conv, user, thread, status, timeout, activity, empty):
            let conv = conv.string, user = user.string, thread = thread?.string
            let status = activity == .status ? status ?? "" : nil
            if let index = streakIndex(conv, user) {
                if streaks[index].thread == thread {
                    if empty {
                        stop(index, reason: "empty")
                    } else {
                        keystrokes += 1
                        streaks[index].deadline = deadline(timeout, activity)
                        streaks[index].keystroke = keystrokes
                        let kept =
                            mutant == .statusWordsKept && streaks[index].activity == .status && activity == .status
                        if streaks[index].activity != activity
                            || (!kept && !(streaks[index].status ?? "").utf8.elementsEqual((status ?? "").utf8))
                        {
                            streaks[index].activity = activity
                            streaks[index].status = status
                            typingEvent(streaks[index], "changed", " \(activity.name)" + Self.quoted(status))
                        }
                    }
                } else if !empty {
                    stop(index, reason: "moved")
                    start(conv, user, thread: thread, activity: activity, status: status, timeout: timeout)
                }
                render(conv)
            } else if memberIndex(conv, user) == nil {
                notMember(line)
            } else {
                if !empty && users[user]?.sendsTyping == true {
                    start(conv, user, thread: thread, activity: activity, status: status, timeout: timeout)
                }
                render(conv)
            }
        case let .send(conv, user, thread):
            let conv = conv.string, user = user.string
            guard memberIndex(conv, user) != nil else { notMember(line); break }
            if let index = streakIndex(conv, user), streaks[index].thread == thread?.string {
                stop(index, reason: "send")
            }
            render(conv)
        case .leave(let conv, let user), .remove(let conv, let user, _):
            let conv = conv.string, user = user.string
            guard let index = memberIndex(conv, user) else { notMember(line); break }
            if case .remove(_, _, let by?) = command, memberIndex(conv, by.string) == nil { notMember(line); break }
            let reason: String
            if case .leave = command { reason = "leave" } else { reason = "removed" }
            if let streak = streakIndex(conv, user) { stop(streak, reason: reason) }
            // Both screens go with the membership.
            conversations[conv]?.remove(at: index)
            if conversations[conv]?.isEmpty == true { conversations[conv] = nil }
            users[user]?.memberships.removeAll { $0 == conv }
            if users[user]?.memberships.isEmpty == true { users[user] = nil }
            render(conv)
        case .offline(let user):
            let user = user.string
            guard let record = users[user] else { break }
            for streak in streaks where streak.user == user {
                if let index = streakIndex(streak.conv, user) { stop(index, reason: "offline") }
                render(streak.conv)
            }
            for conv in record.memberships {
                guard let index = memberIndex(conv, user) else { continue }
                closeView(conv, index)
                if var member = conversations[conv]?[index], member.side != nil {
                    member.side = nil
                    member.sideScreen = forgotten(member.sideScreen)
                    conversations[conv]?[index] = member
                }
            }
        case let .open(conv, user, thread, view, pane):
            let conv = conv.string, user = user.string
            guard let index = memberIndex(conv, user), var member = conversations[conv]?[index] else {
                notMember(line); break
            }
            if pane == .side {
                // A side pane always shows a thread (the decoder refuses one without).
                let target = thread?.string
                if member.side != target { member.sideScreen = forgotten(member.sideScreen) }
                member.side = target
            } else {
                let list = view == .list
                let target = list ? nil : thread?.string
                if member.thread != target || member.isList != list { member.main = forgotten(member.main) }
                member.open = true
                member.thread = target
                member.isList = list
            }
            conversations[conv]?[index] = member
            if let streak = streakIndex(conv, user) {
                let location = streaks[streak].thread
                let shown =
                    mutant == .openAsksOnlyOpenedPane
                    ? (pane == .side ? Self.sideShows(member, location) : Self.mainShows(member, location))
                    : Self.mainShows(member, location) || Self.sideShows(member, location)
                if !shown { stop(streak, reason: "closed") }
            }
            render(conv)
        case .close(let conv, let user, let pane):
            let conv = conv.string, user = user.string
            guard let index = memberIndex(conv, user), var member = conversations[conv]?[index] else {
                notMember(line); break
            }
            if pane == .side {
                let showed = member.side
                member.side = nil
                member.sideScreen = forgotten(member.sideScreen)
                conversations[conv]?[index] = member
                if let streak = streakIndex(conv, user), let showed, streaks[streak].thread == showed,
                    !Self.mainShows(member, showed)
                {
                    stop(streak, reason: "closed")
                }
            } else {
                closeView(conv, index)
                if let streak = streakIndex(conv, user), !Self.sideShows(member, streaks[streak].thread) {
                    stop(streak, reason: "closed")
                }
            }
            render(conv)
        case .forget(let conv, let user):
            let conv = conv.string, user = user.string
            guard let index = memberIndex(conv, user) else { notMember(line); break }
            closeView(conv, index)
            if var member = conversations[conv]?[index] {
                member.main = forgotten(member.main)
                conversations[conv]?[index] = member
            }
        case .restore(let conv, let user, _, _, _):
            // The model keeps its own announcements: a rebuild restores the engine's
            // to what they were, which the model must not be able to tell.
            if memberIndex(conv.string, user.string) == nil { notMember(line) }
        case let .user(user, name, sendTyping, locale, receiveTyping):
            let user = user.string
            guard users[user] != nil else { notMember(line); break }
            let (renamed, hides) = setting(user, name: name, sendTyping: sendTyping)
            if renamed || hides { visitStreaks(user, except: nil, hides: hides) }
            if viewSettings(user, locale: locale, receive: receiveTyping) { visitViews(user, except: nil) }
        case .query(let conv, let thread):
            let conv = conv.string
            let members = (conversations[conv] ?? []).map(\.user)
            let open = (conversations[conv] ?? []).filter(\.open).map(\.user)
            let typers = typers(of: conv, at: thread?.string, excluding: nil)
            let activities =
                typers.contains { $0.activity != .typing } ? " activities=\(typers.map(\.activity.name))" : ""
            out.append(
                "state \(place(conv, thread?.string)) members=\(members)\(open.isEmpty ? "" : " open=\(open)") typing=\(typers.map(\.user))\(activities)"
            )
        case .tick, .stats, .snapshot:
            break
        }
        return out
    }
}

/// The engine against ``ReferenceModel``, step by step.
@Suite("The engine against a plain model of the protocol")
struct ReferenceModelTests {
    /// Status words: a few that repeat (so that a keystroke keeps them), and some
    /// that look like placeholders or hold marks that reorder or join text.
    static let statuses = [
        "is thinking", "is thinking", "is searching {0} the web", "{verb}", "is \u{202E}reversed",
        "is \u{200D}joined", "\u{61C}x", "Zoë", "Zoe\u{308}"
    ]

    static let names: [String?] = [
        nil, "", " \t", "N0", "N1", "N2", "N3", "Someone", "Zoë", "Zoe\u{308}", "Maria Fernanda Silva",
        "A long name that is cut here", "  padded  ", "padded", "Ana\u{1}\u{7F}", "\u{85}\u{A0}",
        "abcdefghijklmn\u{301}opqr", String(repeating: "e\u{301}", count: 20),
        "abcdefghijklmn👩‍👩‍👧‍👦xyz", "x" + String(repeating: "\u{301}", count: 500)
    ]

    /// A random command over `convs` conversations, `threads` threads and `users` users.
    /// With `churn`, a third of the commands are joins and leaves, half each: big
    /// rooms fill and empty, and their vacant slots are compacted again and again.
    static func command(_ rng: inout SplitMix64, convs: Int, users: Int, churn: Bool = false) -> Command {
        let conv = ID("c\(rng.below(convs))"), user = ID("u\(rng.below(users))")
        if churn && rng.below(3) == 0 {
            return rng.below(2) == 0
                ? .join(
                    conv: conv, user: user, name: "N\(rng.below(4))",
                    receiveTyping: rng.below(4) == 0 ? false : nil)
                : .leave(conv: conv, user: user)
        }
        let thread: Identifier? = rng.below(3) == 0 ? nil : ID("t\(rng.below(3))")
        let locales: [String?] = [nil, "en", "EN", "fr", "de-CH"]
        switch rng.below(24) {
        case 0, 1, 2:
            return .join(
                conv: conv, user: user, name: rng.below(3) == 0 ? nil : names[rng.below(names.count)],
                sendTyping: rng.below(10) == 0 ? false : (rng.below(3) == 0 ? true : nil),
                locale: locales[rng.below(locales.count)],
                receiveTyping: rng.below(6) == 0 ? rng.below(3) != 0 : nil)
        case 3:
            return rng.below(2) == 0
                ? .leave(conv: conv, user: user)
                : .remove(conv: conv, user: user, by: rng.below(2) == 0 ? nil : ID("u\(rng.below(users))"))
        case 4, 5:
            let list = rng.below(4) == 0
            return .open(conv: conv, user: user, thread: list ? nil : thread, view: list ? .list : .chat)
        case 6: return .close(conv: conv, user: user)
        case 7:
            return .user(
                user: user, name: rng.below(3) == 0 ? names[rng.below(names.count)] : nil,
                sendTyping: rng.below(5) == 0 ? rng.below(2) == 0 : nil,
                locale: locales[rng.below(locales.count)],
                receiveTyping: rng.below(3) == 0 ? rng.below(2) == 0 : nil)
        case 8: return .offline(user: user)
        case 9: return .send(conv: conv, user: user, thread: thread)
        case 10: return .query(conv: conv, thread: thread)
        case 11: return .forget(conv: conv, user: user)
        case 12: return .tick
        default:
            let activity = Activity.allCases[rng.below(3) == 0 ? rng.below(Activity.allCases.count) : 0]
            let empty = rng.below(10) == 0
            let timeout = rng.below(4) == 0 ? 1 + rng.below(6000) : nil
            let status = activity == .status ? Self.statuses[rng.below(Self.statuses.count)] : nil
            return .type(
                conv: conv, user: user, thread: thread, status: status, timeout: timeout, activity: activity,
                empty: empty)
        }
    }

    static let configurations: [EngineConfiguration] = [
        EngineConfiguration(typingEvents: true),
        EngineConfiguration(
            style: .compact, typingEvents: true, audience: .open, order: .recent, maxListed: 2,
            listStyle: .group),
        EngineConfiguration(order: .name, maxListed: 1),
        EngineConfiguration(typingEvents: true, audience: .open, order: .name, listStyle: .compact),
        EngineConfiguration(typingEvents: true, order: .recent, maxListed: 3)
    ]

    /// Runs `steps` random commands through both; returns the first difference.
    /// Every `rebuildEvery` steps (0: never), the engine is replaced by one rebuilt
    /// from its snapshot (``EngineSnapshotTests/rebuild(from:into:)``), which the
    /// model must not be able to tell apart.
    static func differ(
        configuration: EngineConfiguration, seed: UInt64, steps: Int, convs: Int, users: Int,
        startTime: Int = 0, checks: Bool = true, rebuildEvery: Int = 0, churn: Bool = false
    ) -> String? {
        var rng = SplitMix64(seed: seed)
        var h = Harness(configuration, checksEveryStep: checks)
        var model = ReferenceModel(configuration)
        var time = startTime
        var transcript: [String] = []
        for step in 0..<steps {
            if rebuildEvery > 0 && step % rebuildEvery == rebuildEvery - 1 {
                var events: [Event] = []
                h.engine.apply(Request(.snapshot, line: 0), to: &events)
                var rebuilt = Harness(configuration, checksEveryStep: checks)
                EngineSnapshotTests.rebuild(from: events, into: &rebuilt)
                rebuilt.line = h.line
                h = rebuilt
                transcript.append("(snapshot, rebuilt)")
            }
            let command = command(&rng, convs: convs, users: users, churn: churn)
            let at: Int? = rng.below(5) == 0 ? nil : min(time + rng.below(400), ReferenceModel.maxTime)
            if let at { time = at }
            transcript.append("\(command) at \(at.map(String.init) ?? "-")")
            let actual = h.run(command, at: at)
            let expected = model.apply(command, at: at, line: h.line)
            if !actual.elementsEqual(expected, by: { $0.utf8.elementsEqual($1.utf8) }) {
                return "seed \(seed), after\n" + transcript.suffix(25).joined(separator: "\n")
                    + "\nengine: \(actual)\nmodel:  \(expected)"
            }
        }
        return nil
    }

    @Test("random v3 transcripts: the engine writes exactly what the model writes", arguments: 0..<5)
    func smallRooms(configuration index: Int) {
        for seed in 0..<6 {
            if let difference = Self.differ(
                configuration: Self.configurations[index], seed: UInt64(index * 1000 + seed),
                steps: 500, convs: 3, users: 8)
            {
                Issue.record(Comment(rawValue: difference))
                return
            }
        }
    }

    @Test("random v3 transcripts, the engine rebuilt from its snapshot every 40 commands", arguments: 0..<5)
    func rebuilt(configuration index: Int) {
        for seed in 0..<4 {
            if let difference = Self.differ(
                configuration: Self.configurations[index], seed: UInt64(70_000 + index * 1000 + seed),
                steps: 500, convs: 3, users: 8, checks: false, rebuildEvery: 40)
            {
                Issue.record(Comment(rawValue: difference))
                return
            }
        }
    }

    @Test("random v3 transcripts at the top of the clock (deadlines capped at 2^53 − 1)", arguments: 0..<5)
    func topOfTheClock(configuration index: Int) {
        for seed in 0..<6 {
            if let difference = Self.differ(
                configuration: Self.configurations[index], seed: UInt64(50_000 + index * 1000 + seed),
                steps: 400, convs: 2, users: 6, startTime: ReferenceModel.maxTime - 3_000)
            {
                Issue.record(Comment(rawValue: difference))
                return
            }
        }
    }

    @Test("random v3 transcripts in rooms past 64 members (slot sets with levels, compaction)", arguments: 0..<5)
    func bigRooms(configuration index: Int) {
        for seed in 0..<2 {
            if let difference = Self.differ(
                configuration: Self.configurations[index], seed: UInt64(90_000 + index * 1000 + seed),
                steps: 3_000, convs: 2, users: 150, checks: false, churn: seed == 1)
            {
                Issue.record(Comment(rawValue: difference))
                return
            }
        }
    }
}
