extension Engine {
    /// The bytes of an `indicator` beyond its ids, activities and phrase: keys,
    /// punctuation, the largest `at` and `more`, `"view":"list"` (or, never with
    /// it, a side pane's `"pane":"side"`, as long), the LF.
    static let indicatorOverhead = 140
    /// The bytes of one listed activity (`"sharing_location",`) and of the key.
    static let activityBytes = 19, activitiesOverhead = 16
    /// The most bytes of a count in a phrase.
    static let clauseOverhead = PhraseTable.maxCountBytes
    /// The bytes of a `typing` event beyond its ids: keys, the largest `at`, the
    /// longest state, activity and reason.
    static let typingOverhead = 140
    /// The bytes of an `ok` beyond its id: keys, the largest line number (and, in
    /// text, time), the LF.
    static let okOverhead = 80
    /// The bytes of `,"thread":` around a thread id.
    static let threadKey = 12
    /// The bytes around status words in a `typing` event: `,"status":""`, or text's
    /// ` (status "")`.
    static let statusKey = 16

    /// The most bytes status words take in output, in either format: as a display
    /// name's, at most ``UserRecord/nameEscapeFactor`` times their bytes (they hold
    /// no control character: Protocol.md#status-in-ones-own-words).
    static func wordsBound(_ words: String?) -> Int {
        (words?.utf8.count ?? 0) * UserRecord.nameEscapeFactor
    }

    /// The most bytes of events that applying `command` now could write (replies to
    /// `query`, `stats` and `snapshot` aside: they are what was asked for). It is an
    /// upper bound, not the output: every render of a location it touches is
    /// counted as if every viewer the render compares got a new indicator listing
    /// `--max-listed` ids as long as the longest of the room's members now, each
    /// with an activity, and a phrase of a clause per activity and one per status
    /// typer, each as long as the longest clause of any table with three names as
    /// long as the longest of its typers' now, the status clauses with their words. It depends only on what the protocol shows (members, typers,
    /// screens), so a process rebuilt from a snapshot computes the same.
    /// O(the conversations the command would render).
    ///
    /// It counts the forgotten screens the command tells too (`--max-output-per-line`
    /// compares it less those: they are owed from earlier steps). So
    /// one line's output is bounded: viewers × (ids listed + 1) × the longest id,
    /// per conversation rendered.
    public func outputBound(of command: Command) -> Int {
        bound(of: command, forgotten: true)
    }

    /// What `--max-output-per-line` compares with: ``outputBound(of:)`` less the
    /// forgotten screens (Protocol.md#bounded-output) the command tells. Those are
    /// owed from earlier steps, like timeouts, and are told whatever the cap: a
    /// command that writes nothing else is never refused for them, so they can never
    /// wedge a room.
    package func chargedOutputBound(of command: Command) -> Int {
        bound(of: command, forgotten: false)
    }

    /// ``outputBound(of:)``, with the forgotten screens the command tells
    /// (`forgotten`) or without.
    func bound(of command: Command, forgotten: Bool) -> Int {
        var total = Bound()
        switch command {
        case let .join(conv, user, name, sendTyping, locale, receiveTyping):
            let c = findConversation(conv)
            guard let u = findUser(user) else {
                guard let c else { return 0 }
                total.add(memberBound(c, at: .main, viewer: user.encodedBound, forgotten: forgotten))
                total.add(hushBound(c, joining: true))
                return total.value
            }
            settingsBound(
                of: u, name: name, sendTyping: sendTyping, locale: locale, receiveTyping: receiveTyping,
                forgotten: forgotten, into: &total)
            if let c {
                total.add(memberBound(c, at: .main, viewer: user.encodedBound, forgotten: forgotten))
                if let slot = conversations[c].slot(of: u) {
                    total.add(
                        memberBound(c, at: conversations[c].members[slot].location, viewer: 0, forgotten: forgotten))
                    total.add(sidePaneBound(c, slot: slot))
                } else {
                    total.add(hushBound(c, joining: true))
                }
            }
        case let .type(conv, user, thread, status, _, activity, empty):
            guard let (c, u, slot) = membership(of: user, in: conv) else { return 0 }
            // Every command naming a conversation renders it: at least its
            // forgotten screens are told.
            total.add(forgottenBound(c, forgotten))
            let streak = conversations[c].members[slot].streak
            let here = location(of: thread, in: c)
            // A status keystroke brings a clause of its own, with its words.
            let words = activity == .status ? status ?? "" : nil
            let newActivity = activity != .typing && activity != .status
            if !streak.isNone && streaks[streak].location == here {
                if empty || configuration.order == .recent || streaks[streak].activity != activity
                    || !sameWords(of: streak, as: words)
                {
                    total.add(
                        renderBound(c, forgotten, at: here, newTyperName: 0, newActivity: newActivity, newWords: words))
                } else {
                    total.add(memberBound(c, at: here, viewer: 0, forgotten: forgotten))
                }
            } else if !empty && users[u].sendsTyping {
                if !streak.isNone {
                    total.add(
                        renderBound(c, forgotten, at: streaks[streak].location, newTyperName: 0, newActivity: false))
                }
                total.add(
                    renderBound(
                        c, forgotten, at: here, newTyperName: users[u].nameBound, newActivity: newActivity,
                        newWords: words, thread: thread))
            }
        case let .send(conv, user, thread):
            guard let (c, _, slot) = membership(of: user, in: conv) else { return 0 }
            total.add(forgottenBound(c, forgotten))
            // The streak stops only where the message was sent.
            let streak = conversations[c].members[slot].streak
            if !streak.isNone && streaks[streak].location == location(of: thread, in: c) {
                total.add(renderBound(c, forgotten, at: streaks[streak].location, newTyperName: 0, newActivity: false))
            }
        case let .leave(conv, user), let .remove(conv, user, _), let .close(conv, user, _):
            guard let (c, _, slot) = membership(of: user, in: conv) else { return 0 }
            total.add(forgottenBound(c, forgotten))
            let streak = conversations[c].members[slot].streak
            if !streak.isNone {
                total.add(renderBound(c, forgotten, at: streaks[streak].location, newTyperName: 0, newActivity: false))
            }
            if case .close = command {
                // Closing a thread or the list turns the closer's screen back to the
                // main timeline: the render compares them there too.
                total.add(viewerBound(c, at: .main))
            } else {
                total.add(hushBound(c, joining: false))
            }
        case let .offline(user):
            guard let u = findUser(user) else { return 0 }
            forEachStreak(of: u) { c, location in
                total.add(renderBound(c, forgotten, at: location, newTyperName: 0, newActivity: false))
            }
        case let .open(conv, user, thread, view, pane):
            guard let (c, _, slot) = membership(of: user, in: conv) else { return 0 }
            let streak = conversations[c].members[slot].streak
            let target = view == .list ? Location.main : location(of: thread, in: c)
            // The streak stops only when the screen moves away from it, or is a list
            // (counted whatever the other screen shows: an upper bound).
            if !streak.isNone && (view == .list || streaks[streak].location != target) {
                total.add(renderBound(c, forgotten, at: streaks[streak].location, newTyperName: 0, newActivity: false))
            }
            total.add(memberBound(c, at: target, viewer: 0, forgotten: forgotten, thread: view == .list ? nil : thread))
            // The render compares the opener's other screen too.
            if pane == .side {
                total.add(memberBound(c, at: conversations[c].members[slot].location, viewer: 0, forgotten: false))
            } else {
                total.add(sidePaneBound(c, slot: slot))
            }
        case let .user(user, name, sendTyping, locale, receiveTyping):
            guard let u = findUser(user) else { return 0 }
            settingsBound(
                of: u, name: name, sendTyping: sendTyping, locale: locale, receiveTyping: receiveTyping,
                forgotten: forgotten, into: &total)
        case .tick, .query, .stats, .snapshot, .forget, .restore:
            return 0
        }
        return total.value
    }

    /// The most bytes of the `ok` a command with `id` gets, in either format:
    /// `{"event":"ok","line":…,"id":…}` or `… ok line … (id …)`, with the largest
    /// line number and time.
    static func okBound(_ id: Request.ID) -> Int {
        switch id {
        case .integer: return Engine.okOverhead + 20
        case .string(let string): return Engine.okOverhead + 6 * string.utf8.count + 2
        }
    }

    /// Adds the renders a change of settings of user `u` causes: the locations where
    /// they type (a rename, hiding), and each of their memberships (a language,
    /// seeing typing).
    func settingsBound(
        of u: UserIndex, name: String?, sendTyping: Bool?, locale: String?, receiveTyping: Bool?,
        forgotten: Bool, into total: inout Bound
    ) {
        let (change, display, _) = settingsChange(of: u, name: name, sendTyping: sendTyping)
        if change.touchesStreaks {
            // A rename lists the new name wherever they type: it may be longer than
            // any typer's name there now.
            let renamed = change.renamed ? UserRecord.nameBound(of: display ?? DisplayName.unknown) : 0
            forEachStreak(of: u) { c, location in
                total.add(
                    renderBound(
                        c, forgotten, at: location, newTyperName: 0, newActivity: false, renamedTyperName: renamed))
            }
        }
        if viewSettingsChange(of: u, locale: locale, receiveTyping: receiveTyping) {
            let first = users[u].memberships
            var link = first
            repeat {
                let c = memberships[link].conv
                link = memberships[link].next
                if let slot = conversations[c].slot(of: u) {
                    total.add(
                        memberBound(c, at: conversations[c].members[slot].location, viewer: 0, forgotten: forgotten))
                    total.add(sidePaneBound(c, slot: slot))
                }
            } while link != first
        }
    }

    /// Calls `body` with the conversation and location of each of `u`'s streaks.
    func forEachStreak(of u: UserIndex, _ body: (ConversationIndex, Location) -> Void) {
        var s = users[u].streaks.first
        while !s.isNone {
            body(streaks[s].conv, streaks[s].location)
            s = streaks[s].userNext
        }
    }

    /// The most bytes a render of one member of `c` at `location` writes (with the
    /// stale members it compares too).
    func memberBound(
        _ c: ConversationIndex, at location: Location, viewer: Int, forgotten: Bool,
        thread: Identifier? = nil
    ) -> Int {
        var bound = Bound()
        bound.add(viewerBound(c, at: location, viewer: viewer, thread: thread))
        bound.add(forgottenBound(c, forgotten))
        return bound.value
    }

    /// True when `c` is above `--quiet-above` and every screen holds the empty
    /// indicator (Protocol.md#quiet-large-rooms): its renders write no indicator.
    @inline(__always)
    func isHushed(_ c: ConversationIndex) -> Bool {
        conversations[c].isHushed
    }

    /// What crossing `--quiet-above` makes a command write in `c`, beyond its own
    /// renders: a `join` that takes the room past the limit sends every screen the
    /// empty indicator (every member's main screen and side pane); a leave that
    /// brings it back renders every screen at every location.
    func hushBound(_ c: ConversationIndex, joining: Bool) -> Int {
        guard let quiet = configuration.quietAbove else { return 0 }
        let record = conversations[c]
        var bound = Bound()
        if joining && !record.isHushed && record.memberCount >= quiet {
            let screens = record.memberCount + record.sideSent.count
            // The widest empty indicator: at the thread with the longest id.
            var thread = 0
            record.threads.forEachLocation {
                thread = max(thread, record.threads[$0].id.encodedBound + Engine.threadKey)
            }
            bound.add(
                screens,
                times: Engine.indicatorOverhead + record.id.encodedBound + Int(record.longestMemberID)
                    + thread)
        } else if !joining && record.isHushed && record.memberCount - 1 <= quiet {
            bound.add(record.mainAudience.count, times: viewerBound(c, at: .main))
            record.threads.forEachLocation { location in
                let thread = record.threads[location]
                bound.add(thread.viewers.count + thread.sideViewers.count, times: viewerBound(c, at: location))
            }
        }
        return bound.value
    }

    /// The most bytes of one indicator to the side pane of member `slot` of `c`,
    /// when they have one (Protocol.md#side-panes); 0 when not.
    func sidePaneBound(_ c: ConversationIndex, slot: Int) -> Int {
        let side = conversations[c].members[slot].side
        return side > .main ? viewerBound(c, at: side) : 0
    }

    /// The most bytes telling the stale members of `c` what they see writes (a
    /// render of `c` that changes nothing else); 0 unless `forgotten`.
    func forgottenBound(_ c: ConversationIndex, _ forgotten: Bool) -> Int {
        let stale = conversations[c].staleSlots.count
        guard forgotten && stale > 0 else { return 0 }
        var bound = Bound()
        bound.add(stale, times: viewerBound(c, at: .main))
        return bound.value
    }

    /// The most bytes one render of `location` of `c` writes (with one more typer
    /// whose name takes `newTyperName` bytes, when one starts, and maybe a new
    /// activity, or a status clause with `newWords`): two `typing` events, an
    /// indicator for every viewer the render compares there, and, when `forgotten`,
    /// the stale members.
    func renderBound(
        _ c: ConversationIndex, _ forgotten: Bool, at location: Location, newTyperName: Int, newActivity: Bool,
        newWords: String? = nil, thread: Identifier? = nil, renamedTyperName: Int = 0
    ) -> Int {
        let record = conversations[c]
        let viewers: Int
        if isHushed(c) {
            // Above --quiet-above every screen already holds the empty indicator: a
            // render writes none (a leave back to the limit is hushBound's).
            viewers = 0
        } else if location != .main {
            // Its viewers' main screens and side panes.
            viewers =
                location > .main
                ? record.threads[location].viewers.count + record.threads[location].sideViewers.count : 0
        } else {
            // The main timeline's audience; its stale members are among them, and
            // counted only when `forgotten`.
            viewers = record.mainAudience.count - (forgotten ? 0 : record.staleSlots.count)
        }
        var bound = Bound()
        if configuration.typingEvents {
            bound.add(
                2,
                times: Engine.typingOverhead + record.id.encodedBound + Int(record.longestMemberID)
                    + threadBytes(c, at: location, thread: thread))
            if newWords != nil { bound.add(Engine.statusKey + Engine.wordsBound(newWords)) }
        }
        bound.add(
            viewers,
            times: viewerBound(
                c, at: location, newTyper: newTyperName > 0,
                newTyperName: max(newTyperName, renamedTyperName),
                newActivity: newActivity, newWords: newWords, thread: thread))
        let stale = isHushed(c) ? 0 : record.staleSlots.count
        if forgotten && stale > 0 && location > .main { bound.add(stale, times: viewerBound(c, at: .main)) }
        return bound.value
    }

    /// The most bytes of one indicator at `location` of `c` (to a viewer whose id
    /// takes `viewer` bytes, when they may not be a member yet). A location that is
    /// not in use (-1) has no typers. Each status typer there, and `newWords` when
    /// given, is a clause of its own, with its words (O(status typers there): the
    /// phrase is as long).
    func viewerBound(
        _ c: ConversationIndex, at location: Location, viewer: Int = 0, newTyper: Bool = false,
        newTyperName: Int = 0, newActivity: Bool = false, newWords: String? = nil,
        thread: Identifier? = nil
    ) -> Int {
        let record = conversations[c]
        let state =
            location == .main || location > .main && record.threads.contains(location)
            ? record[location: location] : LocationState()
        let typers = state.typers.count(in: streaks) + (newTyper ? 1 : 0)
        let listed = min(typers, configuration.maxListed)
        let id = Int(record.longestMemberID)
        let name = max(Int(state.typerNameLengths.longest), newTyperName)
        var clauses = 1, words = Bound()
        var statusTypers: [StreakIndex] = []
        if let groups = state.groups {
            clauses = 0
            for activity in Activity.phrased where !groups.trees[Int(activity.rawValue)].isEmpty { clauses += 1 }
            let tree = groups.trees[Int(Activity.status.rawValue)]
            tree.collect(first: tree.count(in: streaks), in: streaks, into: &statusTypers)
            for s in statusTypers { words.add(Engine.wordsBound(statusWords[s])) }
        }
        if newActivity { clauses += 1 }
        clauses = min(clauses, Activity.phrased.count)
        clauses += statusTypers.count
        if newWords != nil {
            clauses += 1
            words.add(Engine.wordsBound(newWords))
        }
        let phrases = configuration.phrases.bounds
        var bound = Bound()
        bound.add(
            Engine.indicatorOverhead + record.id.encodedBound + max(id, viewer)
                + threadBytes(c, at: location, thread: thread))
        bound.add(listed, times: id + 1 + Engine.activityBytes)
        bound.add(Engine.activitiesOverhead)
        var clause = Bound()
        clause.add(phrases.clause)
        clause.add(phrases.names, times: name)
        clause.add(phrases.counts, times: Engine.clauseOverhead)
        bound.add(clauses, times: clause.value)
        bound.add(words.value)
        bound.add(clauses, times: phrases.separator)
        bound.add(phrases.end)
        return bound.value
    }

    /// The bytes of `,"thread":"…"` in events at `location` of `c` (a thread in use, or
    /// `thread`, when the command names one not in use yet); 0 at the main timeline.
    func threadBytes(_ c: ConversationIndex, at location: Location, thread: Identifier?) -> Int {
        if location > .main && conversations[c].threads.contains(location) {
            return conversations[c].threads[location].id.encodedBound + Engine.threadKey
        }
        return thread.map { $0.encodedBound + Engine.threadKey } ?? 0
    }

    /// A sum that saturates at `Int.max` instead of trapping.
    struct Bound {
        private(set) var value = 0

        mutating func add(_ amount: Int) {
            let (sum, overflow) = value.addingReportingOverflow(amount)
            value = overflow ? .max : sum
        }

        mutating func add(_ count: Int, times amount: Int) {
            let (product, overflow) = count.multipliedReportingOverflow(by: amount)
            add(overflow ? .max : product)
        }
    }
}
