import HeapModule

extension Engine {
    /// Applies one request: checks its time, fires the timeouts due by then (by
    /// now, without a time), runs the command and ends with its `ok`, its reply or
    /// its `error`.
    @inlinable
    public mutating func apply<S: EventSink & ~Copyable>(_ request: consuming Request, to sink: inout S) {
        // Handed on, not copied: a request is big, and copying one is slow.
        var pending = Optional(request)
        EventTarget.with(&sink) { target in
            if let request = pending.take() { applyRequest(request, to: &target) }
        }
    }

    /// ``apply(_:to:)`` for the engine's own target: not generic, so the engine's
    /// code is compiled once, specialized, whatever sink its user has.
    @usableFromInline
    mutating func applyRequest(_ request: consuming Request, to sink: inout EventTarget) {
        let line = request.line, id = request.id
        var at = request.at
        if let given = at, !(0...Engine.maxTime).contains(given) || given < now {
            guard lateAtIsClamped(given) else {
                rejectTime(given, line: line, id: id, to: &sink)
                return
            }
            at = now
        }
        // Timeouts due by the command's time fire first. Without `at` that is the
        // current time: at the top of the range (2^53 − 1) a keystroke's deadline is
        // now itself, and the next command finds that streak ended, as one that
        // arrives exactly at a deadline does (Protocol.md#streaks-and-timeouts,
        // Protocol.md#steps).
        advanceClock(to: at ?? now, sink: &sink)
        if configuration.maxOutputPerLine != nil && refusesOutput(of: request.command, line: line, id: id, to: &sink) {
            return
        }
        var failure: Failure?
        // The command is swapped out of the request (which this call owns) and
        // consumed: its payload is moved into the bindings, not copied.
        var command = Command.tick
        swap(&command, &request.command)
        switch consume command {
        case let .join(conv, user, name, sendTyping, locale, receiveTyping):
            failure = join(
                conv: conv, user: user, name: name, sendTyping: sendTyping, locale: locale,
                receiveTyping: receiveTyping, sink: &sink)
        case let .type(conv, user, thread, status, timeout, activity, empty):
            failure = keystroke(
                conv: conv, user: user, empty: empty, timeout: timeout, activity: activity,
                thread: thread, status: status, sink: &sink)
        case let .send(conv, user, thread):
            failure = send(conv: conv, user: user, thread: thread, sink: &sink)
        case let .leave(conv, user):
            failure = depart(conv: conv, user: user, by: nil, reason: .leave, sink: &sink)
        case let .remove(conv, user, by):
            failure = depart(conv: conv, user: user, by: by, reason: .removed, sink: &sink)
        case let .offline(user):
            offline(user: user, sink: &sink)
        case let .open(conv, user, thread, view, pane):
            if pane == .side, let thread {
                failure = openSide(conv: conv, user: user, thread: thread, sink: &sink)
            } else {
                failure = open(conv: conv, user: user, thread: thread, view: view, sink: &sink)
            }
        case let .close(conv, user, .side):
            failure = closeSide(conv: conv, user: user, sink: &sink)
        case let .close(conv, user, _):
            failure = close(conv: conv, user: user, sink: &sink)
        case let .forget(conv, user):
            failure = forget(conv: conv, user: user)
        case let .restore(conv, user, pane, announceAt, announced):
            failure = restore(conv: conv, user: user, pane: pane, announceAt: announceAt, announced: announced)
        case let .user(user, name, sendTyping, locale, receiveTyping):
            failure = self.user(
                user, name: name, sendTyping: sendTyping, locale: locale, receiveTyping: receiveTyping,
                sink: &sink)
        case .tick:
            break
        case let .query(conv, thread):
            commandsApplied += 1
            emit(.state(state(of: conv, thread: thread, id: id)), to: &sink)
            return
        case .stats:
            commandsApplied += 1
            emit(.stats(stats(id: id, line: line)), to: &sink)
            return
        case .snapshot:
            commandsApplied += 1
            snapshot(id: id, sink: &sink)
            return
        }
        if let failure {
            reject(failure, line: line, id: id, to: &sink)
            return
        }
        commandsApplied += 1
        if let id {
            emit(.ok(Event.OK(at: now, line: line, id: id)), to: &sink)
        }
    }

    // The rare paths of applyRequest, out of line so that its common path stays small.

    /// True when `at` is in range but earlier than now, and `--late-at clamp` says to
    /// apply such a command at the current time.
    @inline(never)
    func lateAtIsClamped(_ at: Int) -> Bool {
        configuration.lateAt == .clamp && (0...Engine.maxTime).contains(at)
    }

    /// Rejects `request` for its `at`: out of range, or earlier than now.
    @inline(never)
    mutating func rejectTime(_ at: Int, line: Int, id: Request.ID?, to sink: inout EventTarget) {
        if !(0...Engine.maxTime).contains(at) {
            rejectLine(
                Event.Error(
                    line: line, id: id, code: .badField,
                    message: "\"at\" must be from 0 to \(Engine.maxTime) milliseconds, not \(at)",
                    field: "at"), to: &sink)
        } else {
            rejectLine(
                Event.Error(
                    line: line, id: id, code: .timeBackwards,
                    message: "at \(at) is earlier than the current time \(now); time never goes back",
                    field: "at"), to: &sink)
        }
    }

    /// Under `--max-output-per-line`: rejects `request` and returns true when it could
    /// write more than the cap allows.
    @inline(never)
    mutating func refusesOutput(of command: Command, line: Int, id: Request.ID?, to sink: inout EventTarget) -> Bool {
        guard let cap = configuration.maxOutputPerLine else { return false }
        var total = Bound()
        total.add(chargedOutputBound(of: command))
        // Its `ok` counts too (the replies of query, stats and snapshot are what was
        // asked for; an error replaces the command's output).
        switch command {
        case .query, .stats, .snapshot: break
        default: if let id { total.add(Engine.okBound(id)) }
        }
        let bound = total.value
        guard bound > cap else { return false }
        rejectLine(
            Event.Error(
                line: line, id: id, code: .limit,
                message:
                    "this command could write up to \(bound) bytes of events, more than --max-output-per-line \(cap) allows; it was not applied",
                field: nil), to: &sink)
        return true
    }

    /// Rejects `request` for `failure`.
    @inline(never)
    mutating func reject(_ failure: Failure, line: Int, id: Request.ID?, to sink: inout EventTarget) {
        rejectLine(
            Event.Error(
                line: line, id: id, code: failure.code,
                message: failure.message, field: failure.field), to: &sink)
    }

    /// Writes an `error` event for a line that was not applied (the decoder's errors
    /// come here too, so that `stats` counts every error and event).
    @inlinable
    public mutating func reject<S: EventSink & ~Copyable>(_ error: Event.Error, to sink: inout S) {
        EventTarget.with(&sink) { target in rejectLine(error, to: &target) }
    }

    /// ``reject(_:to:)`` for the engine's own target: the error is stamped with the
    /// current time.
    @usableFromInline
    mutating func rejectLine(_ error: Event.Error, to sink: inout EventTarget) {
        var error = error
        error.at = now
        emit(.error(error), to: &sink)
    }

    /// The `state` reply for `conv` at `thread` (nil: the main timeline): members
    /// and open views in join order, the location's typers in the order viewers
    /// see them, with their activities when one does not type (not capped: it
    /// answers an explicit question).
    func state(of conv: Identifier, thread: Identifier?, id: Request.ID?) -> Event.State {
        guard let c = findConversation(conv) else {
            return Event.State(at: now, id: id, conv: conv, thread: thread, members: [], open: [], typing: [])
        }
        let record = conversations[c]
        let members = record.members.lazy.filter(\.isOccupied).map { users[$0.user].id }
        let open = record.openSlots.elements.map { users[record.members[$0].user].id }
        var typing: [Identifier] = []
        var activities: [Activity] = []
        let location = location(of: thread, in: c)
        if location >= 0 {
            record[location: location].typers.forEach(in: streaks) { s in
                typing.append(users[streaks[s].user].id)
                activities.append(streaks[s].activity)
                return true
            }
        }
        return Event.State(
            at: now, id: id, conv: conv, thread: thread, members: Array(members), open: open,
            typing: typing, activities: activities.contains { $0 != .typing } ? activities : nil)
    }

    /// The reply to `snapshot`: for each conversation (in the engine's storage
    /// order), a `member` event for each membership in join order, then a `streak`
    /// event for each live streak in the order the streaks began; then the
    /// `snapshot` event. O(memberships + streaks × log streaks): it answers an
    /// explicit question, as `query` does.
    mutating func snapshot<S: EventSink & ~Copyable>(id: Request.ID?, sink: inout S) {
        // The streaks as listed (conversation by conversation, each in the order
        // they began), and every one's rank by its last keystroke, from 1.
        var listed: [StreakIndex] = []
        listed.reserveCapacity(streaks.count)
        for c in conversations.liveIndices {
            let start = listed.count
            forEachTyper(of: c) { listed.append($0) }
            listed[start...].sort { streaks[$0].started < streaks[$1].started }
        }
        var rank: [StreakIndex: Int] = [:]
        rank.reserveCapacity(listed.count)
        for (index, s) in listed.sorted(by: { streaks[$0].keystroke < streaks[$1].keystroke }).enumerated() {
            rank[s] = index + 1
        }
        // Where the listing is not the order the streaks began in (a user typing
        // in several conversations), each streak says its place in that order.
        var startRank: [StreakIndex: Int] = [:]
        if !zip(listed, listed.dropFirst()).allSatisfy({ streaks[$0].started < streaks[$1].started }) {
            for (index, s) in listed.sorted(by: { streaks[$0].started < streaks[$1].started }).enumerated() {
                startRank[s] = index + 1
            }
        }
        let joinRank = joinRanks()
        // Each pending announcement's time and rank in the order they fire.
        let pendingRank = configuration.announceAfter == nil ? [:] : announcements.ranked()
        // A screen that shows a sentence it has neither pending nor announced (a
        // hand-sent `restore` cleared them) says `"announced":""`, so that its
        // rebuild's `restore` clears what the replayed indicator scheduled.
        func announcement(_ c: ConversationIndex, _ u: UserIndex, slot: Int, side: Bool) -> Event.Member.Announcement {
            guard configuration.announceAfter != nil else { return .none }
            let screen = ScreenKey(conv: c, user: u, side: side)
            let pending = pendingRank[screen], text = announcements.lastAnnounced(screen)
            let shows = !(side ? conversations[c].sideLastSent(of: slot) : conversations[c].lastSent(of: slot)).text
                .isEmpty
            let announced: String? = !text.isEmpty ? text : (pending == nil && shows ? "" : nil)
            return Event.Member.Announcement(due: pending?.due, rank: pending?.rank, announced: announced)
        }

        var members = 0
        for c in conversations.liveIndices {
            for slot in conversations[c].members.indices where conversations[c].members[slot].isOccupied {
                let member = conversations[c].members[slot]
                let u = member.user
                let thread = member.location == .main ? nil : conversations[c].threads[member.location].id
                emit(
                    .member(
                        Event.Member(
                            at: now, conv: conversations[c].id, user: users[u].id,
                            name: users[u].isNamed ? givenNames[u] ?? users[u].displayName : nil,
                            sendTyping: users[u].sendsTyping, open: conversations[c].isOpen(slot),
                            thread: thread, view: member.isList ? .list : .chat,
                            locale: locales[u]?.tag, receiveTyping: users[u].receivesTyping,
                            forgotten: conversations[c].isStale(slot),
                            side: member.side > .main ? conversations[c].threads[member.side].id : nil,
                            joined: joinRank[member.link],
                            announcement: announcement(c, u, slot: slot, side: false),
                            sideAnnouncement: announcement(c, u, slot: slot, side: true))),
                    to: &sink)
                members += 1
            }
            var typers: [StreakIndex] = []
            forEachTyper(of: c) { typers.append($0) }
            for s in typers.sorted(by: { streaks[$0].started < streaks[$1].started }) {
                let location = streaks[s].location
                let thread = location == .main ? nil : conversations[c].threads[location].id
                emit(
                    .streak(
                        Event.Streak(
                            at: now, conv: conversations[c].id, thread: thread,
                            user: users[streaks[s].user].id, activity: streaks[s].activity,
                            status: streaks[s].activity == .status ? statusWords[s] ?? "" : nil,
                            deadline: streaks[s].deadline, keystroke: rank[s] ?? 0,
                            started: startRank[s])),
                    to: &sink)
            }
        }
        emit(
            .snapshot(
                Event.Snapshot(
                    at: now, id: id, conversations: conversations.count, members: members,
                    typing: listed.count)),
            to: &sink)
    }

    /// Where the snapshot's listing of memberships (conversation by conversation,
    /// each in join order) is not an order they could have been joined in (a
    /// user's memberships listed out of the order they joined them), the place of
    /// each membership (by its link) in one that is: every conversation's members
    /// and every user's memberships in join order. Empty when the listing is one.
    /// O(memberships × log memberships).
    func joinRanks() -> [MembershipIndex: Int] {
        // The listing, and each membership's place in it.
        var listing: [MembershipIndex] = [], userOf: [UserIndex] = []
        listing.reserveCapacity(memberships.count)
        userOf.reserveCapacity(memberships.count)
        for c in conversations.liveIndices {
            for member in conversations[c].members where member.isOccupied {
                listing.append(member.link)
                userOf.append(member.user)
            }
        }
        var position: [MembershipIndex: Int] = [:]
        position.reserveCapacity(listing.count)
        for (index, link) in listing.enumerated() { position[link] = index }
        // Consistent when every user's list runs forward through the listing.
        var consistent = true
        users.forEachLive { _, user in
            guard consistent, !user.memberships.isNone else { return }
            var link = user.memberships
            while memberships[link].next != user.memberships {
                let next = memberships[link].next
                if (position[next] ?? 0) < (position[link] ?? 0) { consistent = false }
                link = next
            }
        }
        guard !consistent else { return [:] }
        // Each membership follows its predecessor in the conversation (the one
        // listed before it there) and in its user's list: a topological order, the
        // earliest listed first among those ready.
        var waiting = [MembershipIndex: Int](minimumCapacity: listing.count)
        var successors: [MembershipIndex: [MembershipIndex]] = [:]
        for (index, link) in listing.enumerated() {
            var count = 0
            if index > 0 && memberships[listing[index - 1]].conv == memberships[link].conv {
                count += 1
                successors[listing[index - 1], default: []].append(link)
            }
            if users[userOf[index]].memberships != link {
                count += 1
                successors[memberships[link].previous, default: []].append(link)
            }
            waiting[link] = count
        }
        var ready = Heap<Int>()
        for (index, link) in listing.enumerated() where waiting[link] == 0 { ready.insert(index) }
        var ranks = [MembershipIndex: Int](minimumCapacity: listing.count)
        while let index = ready.popMin() {
            let link = listing[index]
            ranks[link] = ranks.count + 1
            for next in successors[link] ?? [] {
                waiting[next, default: 1] -= 1
                if waiting[next] == 0, let place = position[next] { ready.insert(place) }
            }
        }
        return ranks
    }

    /// Calls `body` with every typer of `c`, at every location.
    func forEachTyper(of c: ConversationIndex, _ body: (StreakIndex) -> Void) {
        conversations[c].main.typers.forEach(in: streaks) { s in
            body(s)
            return true
        }
        conversations[c].threads.forEachLocation { location in
            conversations[c].threads[location].state.typers.forEach(in: streaks) { s in
                body(s)
                return true
            }
        }
    }

    /// The `stats` reply; `line` is the stats command's own line, so lines read.
    func stats(id: Request.ID?, line: Int) -> Event.Stats {
        Event.Stats(
            at: now, id: id, lines: line, commands: commandsApplied, errors: errorsWritten,
            conversations: conversations.count, members: liveMemberships,
            typing: streaks.count, events: eventsWritten)
    }
}

/// Why the engine refused a command that decoded fine (membership, limits).
struct Failure: Error, Equatable {
    /// The error code.
    var code: Event.Error.Code
    /// A sentence for a person.
    var message: String
    /// The field at fault.
    var field: String?

    /// `user` (named by `field`) is not a member of `conv`.
    static func notMember(_ user: Identifier, of conv: Identifier, field: String) -> Failure {
        let who = field == "user" ? "user \(Quote.id(user))" : "\"\(field)\" user \(Quote.id(user))"
        return Failure(
            code: .notMember, message: "\(who) is not a member of conversation \(Quote.id(conv))",
            field: field)
    }
}
