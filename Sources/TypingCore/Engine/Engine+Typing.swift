extension Engine {
    /// `type`: start a streak, move its deadline and set its activity, or (with
    /// `empty`) stop it. A keystroke's deadline is now + `timeout` (the configured
    /// one when nil). A user who does not send typing starts no streak. A keystroke
    /// at another location than the user's streak in `conv` moves it there: the
    /// streak stops (`moved`) and a new one starts, in one step (Protocol.md#threads).
    /// With activity ``Activity/status``, `status` holds the words; a keystroke that
    /// changes them is a change, as one of activity is
    /// (Protocol.md#status-in-ones-own-words).
    mutating func keystroke<S: EventSink & ~Copyable>(
        conv: Identifier, user: Identifier, empty: Bool, timeout: Int?,
        activity: Activity, thread: Identifier?, status: String? = nil,
        sink: inout S
    ) -> Failure? {
        // The words only with their activity (none given: empty ones).
        let words = activity == .status ? status ?? "" : nil
        let pair = pairHash(conv: conv, user: user)
        let timeout = (timeout ?? configuration.timeout).clamped(to: EngineConfiguration.timeoutRange)
        if let streak = findStreak(conv: conv, user: user, hash: pair) {
            let c = streaks[streak].conv
            let here = location(of: thread, in: c)
            if streaks[streak].location == here {
                if empty {
                    stop(streak, reason: .empty, render: true, sink: &sink)
                    return nil
                }
                moveDeadline(of: streak, to: deadline(after: timeout))
                var rerender = false
                if streaks[streak].activity != activity || words != nil && !sameWords(of: streak, as: words) {
                    if streaks[streak].activity != activity { setActivity(of: streak, to: activity) }
                    setWords(of: streak, to: words)
                    if configuration.typingEvents {
                        emit(
                            .typing(typingEvent(streak, state: .changed, activity: activity, status: words)), to: &sink)
                    }
                    rerender = true
                }
                if configuration.order == .recent && promote(streak) { rerender = true }
                if rerender {
                    render(c, scope: .location(here), sink: &sink)
                } else {
                    renderForgotten(c, sink: &sink)
                }
                return nil
            }
            // The streak is at another location: only a keystroke moves it.
            if !empty {
                move(
                    streak, to: thread, activity: activity, status: words, timeout: timeout, pairHash: pair, sink: &sink
                )
            } else {
                renderForgotten(c, sink: &sink)
            }
            return nil
        }
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        // Not typing here (the live index would have found the streak).
        if empty || !users[u].sendsTyping {
            renderForgotten(c, sink: &sink)
            return nil
        }
        let location = thread.map { conversations[c].threads.locate($0) } ?? .main
        startStreak(
            conv: c, user: u, slot: slot, at: location, activity: activity, status: words,
            deadline: deadline(after: timeout), pairHash: pair, render: true, sink: &sink)
        return nil
    }

    /// True when live streak `s` has exactly the status words `words` (nil: none).
    @inline(__always)
    func sameWords(of s: StreakIndex, as words: String?) -> Bool {
        let current = streaks[s].activity == .status ? statusWords[s] : nil
        switch (current, words) {
        case (nil, nil): return true
        case let (current?, words?): return current.sameBytes(as: words)
        default: return false
        }
    }

    /// Keeps `words` as the status words of live streak `s` (nil: it has none).
    @inline(__always)
    mutating func setWords(of s: StreakIndex, to words: String?) {
        if words != nil || !statusWords.isEmpty { statusWords[s] = words }
    }

    /// Moves streak `s` to the location of `thread` (nil: the main timeline) in its
    /// conversation: it stops there and starts anew here, and both locations render.
    @inline(never)
    mutating func move<S: EventSink & ~Copyable>(
        _ streak: StreakIndex, to thread: Identifier?, activity: Activity,
        status words: String?, timeout: Int, pairHash pair: UInt64,
        sink: inout S
    ) {
        let c = streaks[streak].conv
        let from = streaks[streak].location, u = streaks[streak].user
        guard let slot = conversations[c].slot(of: u) else { return }
        stop(streak, reason: .moved, render: false, sink: &sink)
        let to = thread.map { conversations[c].threads.locate($0) } ?? .main
        startStreak(
            conv: c, user: u, slot: slot, at: to, activity: activity, status: words,
            deadline: deadline(after: timeout), pairHash: pair, render: false, sink: &sink)
        render(c, scope: .locations(from, to), sink: &sink)
    }

    /// `send`: the streak, if any, stops at once when it is at the command's
    /// location (else nothing changes).
    mutating func send<S: EventSink & ~Copyable>(
        conv: Identifier, user: Identifier, thread: Identifier?,
        sink: inout S
    ) -> Failure? {
        if let streak = findStreak(conv: conv, user: user, hash: pairHash(conv: conv, user: user)) {
            let c = streaks[streak].conv
            if streaks[streak].location == location(of: thread, in: c) {
                stop(streak, reason: .send, render: true, sink: &sink)
            } else {
                renderForgotten(c, sink: &sink)
            }
            return nil
        }
        guard let (c, _, _) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        renderForgotten(c, sink: &sink)
        return nil
    }

    /// `offline`: every streak of the user stops, in the order they began, then
    /// every view of theirs closes, silently. Each stop is O(1) plus its render,
    /// and closing looks only at the open views, however many conversations the
    /// user is in. An unknown user has no streaks, so this is then a no-op.
    mutating func offline<S: EventSink & ~Copyable>(user: Identifier, sink: inout S) {
        guard let u = findUser(user) else { return }
        var s = users[u].streaks.first
        while !s.isNone {
            let next = streaks[s].userNext
            stop(s, reason: .offline, render: true, sink: &sink)
            s = next
        }
        closeAllViews(of: u)
        removeAllSidePanes(of: u)
    }

    /// The location of `thread` (nil: the main timeline) in `c`; -1 for a thread
    /// nobody types in or looks at.
    @inline(__always)
    func location(of thread: Identifier?, in c: ConversationIndex) -> Location {
        guard let thread else { return .main }
        return conversations[c].threads.location(of: thread) ?? -1
    }

    /// The deadline of a keystroke now with `timeout`: capped at ``maxTime``
    /// (Protocol.md#streaks-and-timeouts), so no event's `at` leaves the range `at`
    /// has on input.
    func deadline(after timeout: Int) -> Int {
        min(now + timeout, Engine.maxTime)
    }

    /// The `typing` event of streak `s` (live) for `state`.
    func typingEvent(
        _ s: StreakIndex, state: Event.Typing.State, activity: Activity? = nil, status: String? = nil,
        reason: Event.Typing.Reason? = nil
    ) -> Event.Typing {
        let record = streaks[s]
        let thread = record.location == .main ? nil : conversations[record.conv].threads[record.location].id
        return Event.Typing(
            at: now, conv: conversations[record.conv].id, thread: thread, user: users[record.user].id,
            state: state, activity: activity, status: status, reason: reason)
    }

    /// Starts a streak of member `slot` (user `u`) in `c` at `location`, doing
    /// `activity` (with `status`, its words, for ``Activity/status``), ending at
    /// `deadline`; renders the location unless told not to.
    mutating func startStreak<S: EventSink & ~Copyable>(
        conv c: ConversationIndex, user u: UserIndex, slot: Int, at location: Location,
        activity: Activity, status words: String? = nil, deadline: Int,
        pairHash: UInt64, render shouldRender: Bool, sink: inout S
    ) {
        keystrokes += 1
        let key = TimerQueue.Key(deadline: deadline, keystroke: keystrokes)
        var record = StreakRecord(
            conv: c, user: u, deadline: deadline, keystroke: keystrokes, alarm: key,
            started: keystrokes, pairHash: pairHash,
            convID: conversations[c].id.fingerprint, userID: users[u].id.fingerprint)
        record.location = location
        record.activity = activity
        record.userPrevious = users[u].streaks.last
        let s = streaks.insert(record)
        if activity == .status { statusWords[s] = words ?? "" }
        if !record.userPrevious.isNone {
            streaks[record.userPrevious].userNext = s
        } else {
            users[u].streaks.first = s
        }
        users[u].streaks.last = s
        streakIndex.insert(hash: pairHash, record: s)
        timers.insert(TimerQueue.Entry(key: key, streak: s))
        insertTyper(s, in: c)
        conversations[c].setStreak(s, at: slot)
        if configuration.typingEvents {
            emit(
                .typing(
                    typingEvent(
                        s, state: .started, activity: activity == .typing ? nil : activity,
                        status: activity == .status ? words ?? "" : nil)), to: &sink)
        }
        if shouldRender { render(c, scope: .location(location), sink: &sink) }
    }

    /// A keystroke of live streak `s`: its deadline becomes `deadline`. A later
    /// deadline costs no heap work (the alarm comes due early and is pushed again);
    /// an earlier one gets a new alarm at once.
    mutating func moveDeadline(of s: StreakIndex, to deadline: Int) {
        keystrokes += 1
        streaks[s].deadline = deadline
        streaks[s].keystroke = keystrokes
        if deadline < streaks[s].alarm.deadline {
            streaks[s].alarm = streaks[s].key
            timers.insert(TimerQueue.Entry(key: streaks[s].alarm, streak: s))
            compactTimersIfNeeded()
        }
    }

    /// Stops streak `s` for `reason`: the `typing` event, then (if `render`) the
    /// indicators of its location. O(log typers) but for the render.
    mutating func stop<S: EventSink & ~Copyable>(
        _ s: StreakIndex, reason: Event.Typing.Reason,
        render shouldRender: Bool, sink: inout S
    ) {
        let record = streaks[s]
        let c = record.conv, u = record.user
        if configuration.typingEvents {
            emit(.typing(typingEvent(s, state: .stopped, reason: reason)), to: &sink)
        }
        removeTyper(s, from: c)
        if !record.userPrevious.isNone {
            streaks[record.userPrevious].userNext = record.userNext
        } else {
            users[u].streaks.first = record.userNext
        }
        if !record.userNext.isNone {
            streaks[record.userNext].userPrevious = record.userPrevious
        } else {
            users[u].streaks.last = record.userPrevious
        }
        if let slot = conversations[c].slot(of: u) {
            conversations[c].setStreak(.none, at: slot)
        }
        streakIndex.remove(hash: record.pairHash, record: s)
        if record.activity == .status { statusWords[s] = nil }
        streaks.remove(s)
        if shouldRender { render(c, scope: .location(record.location), sink: &sink) }
        compactTimersIfNeeded()
    }

    /// Under `--order recent`: a keystroke by a typer who is not first among the
    /// named (or unnamed) typers moves them to the front. True when the move
    /// changes what someone may see (not when it happens wholly beyond the listed
    /// ids and the names in phrases). O(log typers).
    mutating func promote(_ s: StreakIndex) -> Bool {
        let c = streaks[s].conv, location = streaks[s].location
        let front = streaks[s].isNamed ? 0 : conversations[c].typers(at: location).namedCount
        guard conversations[c].typers(at: location).rank(of: s, in: streaks) != front else { return false }
        removeTyper(s, from: c)
        insertTyper(s, in: c)
        return front < max(configuration.maxListed + 1, 3) || conversations[c].hasGroups(at: location)
    }

    /// Sets the activity of live streak `s`, moving it between its location's
    /// activity groups. O(log typers).
    mutating func setActivity(of s: StreakIndex, to activity: Activity) {
        let c = streaks[s].conv, location = streaks[s].location
        if !conversations[c].hasGroups(at: location) {
            streaks[s].activity = activity
            buildGroups(of: c, at: location)
            return
        }
        detachFromGroup(s, in: c)
        streaks[s].activity = activity
        attachToGroup(s, in: c)
    }

    /// Puts streak `s` in its place among the typers at its location: named ones
    /// first, each group in the configured order, and in its activity's group
    /// when the location keeps them. O(log typers) comparisons.
    mutating func insertTyper(_ s: StreakIndex, in c: ConversationIndex) {
        let location = streaks[s].location
        let named = users[streaks[s].user].isNamed
        streaks[s].isNamed = named
        let point = conversations[c].typers(at: location).insertionPoint(for: s, in: streaks) { a, b in
            streaks[a].isNamed != streaks[b].isNamed ? streaks[a].isNamed : precedes(a, b)
        }
        let priority = UInt32(truncatingIfNeeded: Mixer.mix(seed ^ streaks[s].started) >> 32)
        conversations[c][location: location].typers.attach(s, at: point, priority: priority, in: &streaks)
        if named { conversations[c][location: location].typers.namedCount += 1 }
        conversations[c][location: location].typerNameLengths.add(Int32(clamping: users[streaks[s].user].nameBound))
        if conversations[c].hasGroups(at: location) {
            attachToGroup(s, in: c)
        } else if streaks[s].activity != .typing {
            buildGroups(of: c, at: location)
        }
    }

    /// Takes streak `s` out of the typers at its location. O(log typers). A
    /// location where nobody types any more drops its groups.
    mutating func removeTyper(_ s: StreakIndex, from c: ConversationIndex) {
        let location = streaks[s].location
        conversations[c][location: location].typers.remove(s, in: &streaks)
        if streaks[s].isNamed { conversations[c][location: location].typers.namedCount -= 1 }
        conversations[c][location: location].typerNameLengths.remove(Int32(clamping: users[streaks[s].user].nameBound))
        if conversations[c].hasGroups(at: location) { detachFromGroup(s, in: c) }
        if conversations[c].typers(at: location).isEmpty {
            conversations[c][location: location].groups = nil
            conversations[c][location: location].variants.removeAll()
        }
    }

    /// Starts keeping the activity groups of `location`, from its typers (each in
    /// its activity's tree): when a typer there first does something else than
    /// type. O(typers × log typers), once per time the location fills: it drops
    /// them only when nobody types there any more.
    mutating func buildGroups(of c: ConversationIndex, at location: Location) {
        conversations[c][location: location].groups = ActivityGroups(
            trees: Activity.allCases.map { _ in TyperOrder(.group) })
        var typers: [StreakIndex] = []
        conversations[c][location: location].typers.forEach(in: streaks) { s in
            typers.append(s)
            return true
        }
        for s in typers { attachToGroup(s, in: c) }
    }

    /// Links streak `s` into its activity's tree (the location keeps groups).
    mutating func attachToGroup(_ s: StreakIndex, in c: ConversationIndex) {
        let location = streaks[s].location, tree = Int(streaks[s].activity.rawValue)
        guard var groups = conversations[c][location: location].groups else { return }
        conversations[c][location: location].groups = nil // no copy while the tree changes
        let point = groups.trees[tree].insertionPoint(for: s, in: streaks) { a, b in
            streaks[a].isNamed != streaks[b].isNamed ? streaks[a].isNamed : precedes(a, b)
        }
        let priority = UInt32(truncatingIfNeeded: Mixer.mix(~seed ^ streaks[s].started) >> 32)
        groups.trees[tree].attach(s, at: point, priority: priority, in: &streaks)
        if streaks[s].isNamed { groups.trees[tree].namedCount += 1 }
        conversations[c][location: location].groups = groups
    }

    /// Unlinks streak `s` from its activity's tree.
    mutating func detachFromGroup(_ s: StreakIndex, in c: ConversationIndex) {
        let location = streaks[s].location, tree = Int(streaks[s].activity.rawValue)
        guard var groups = conversations[c][location: location].groups else { return }
        conversations[c][location: location].groups = nil
        groups.trees[tree].remove(s, in: &streaks)
        if streaks[s].isNamed { groups.trees[tree].namedCount -= 1 }
        conversations[c][location: location].groups = groups
    }

    /// True when streak `a` is listed before streak `b` of the same group (named
    /// or unnamed), in the configured order (Protocol.md#order-of-typers).
    func precedes(_ a: StreakIndex, _ b: StreakIndex) -> Bool {
        switch configuration.order {
        case .start:
            return streaks[a].started < streaks[b].started
        case .recent:
            return streaks[a].keystroke > streaks[b].keystroke
        case .name:
            let ua = streaks[a].user, ub = streaks[b].user
            if users[ua].isNamed {
                // UTF-8 byte order is Unicode scalar order.
                let nameA = users[ua].displayName.utf8, nameB = users[ub].displayName.utf8
                if !nameA.elementsEqual(nameB) { return nameA.lexicographicallyPrecedes(nameB) }
            }
            return users[ua].id.precedes(users[ub].id)
        }
    }
}
