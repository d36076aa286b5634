extension Engine {
    /// `type`: start a streak, move its deadline, or (with `empty`) stop it. A
    /// keystroke's deadline is now + `timeout` (the configured one when nil). A
    /// user who does not send typing starts no streak.
    mutating func keystroke<S: EventSink & ~Copyable>(conv: Identifier, user: Identifier, empty: Bool, timeout: Int?,
                                                      sink: inout S) -> Failure? {
        let pair = pairHash(conv: conv, user: user)
        let timeout = (timeout ?? configuration.timeout).clamped(to: EngineConfiguration.timeoutRange)
        if let streak = findStreak(conv: conv, user: user, hash: pair) {
            if empty {
                stop(streak, reason: .empty, render: true, sink: &sink)
            } else {
                moveDeadline(of: streak, to: deadline(after: timeout))
                if configuration.order == .recent { promote(streak, sink: &sink) }
            }
            return nil
        }
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        // Not typing here (the live index would have found the streak).
        if empty || !users[u].sendsTyping { return nil }
        startStreak(conv: c, user: u, slot: slot, deadline: deadline(after: timeout), pairHash: pair, sink: &sink)
        return nil
    }

    /// `send`: the streak, if any, stops at once.
    mutating func send<S: EventSink & ~Copyable>(conv: Identifier, user: Identifier, sink: inout S) -> Failure? {
        if let streak = findStreak(conv: conv, user: user, hash: pairHash(conv: conv, user: user)) {
            stop(streak, reason: .send, render: true, sink: &sink)
            return nil
        }
        guard membership(of: user, in: conv) != nil else {
            return .notMember(user, of: conv, field: "user")
        }
        return nil
    }

    /// `offline`: every streak of the user stops, in the order they began, then
    /// every view of theirs closes, silently. Each stop is O(1) plus its render,
    /// and closing looks only at the open views, however many conversations the
    /// user is in. An unknown user has no streaks, so this is then a no-op.
    mutating func offline<S: EventSink & ~Copyable>(user: Identifier, sink: inout S) {
        guard let u = findUser(user) else { return }
        var s = users[u].streaks.first
        while s >= 0 {
            let next = streaks[s].userNext
            stop(s, reason: .offline, render: true, sink: &sink)
            s = next
        }
        closeAllViews(of: u)
    }

    /// The deadline of a keystroke now with `timeout`: capped at ``maxTime`` (§F),
    /// so no event's `at` leaves the range `at` has on input.
    func deadline(after timeout: Int) -> Int {
        min(now + timeout, Engine.maxTime)
    }

    /// Starts a streak of member `slot` (user `u`) in `c`, ending at `deadline`.
    mutating func startStreak<S: EventSink & ~Copyable>(conv c: Int32, user u: Int32, slot: Int, deadline: Int,
                                                        pairHash: UInt64, sink: inout S) {
        keystrokes += 1
        let key = TimerQueue.Key(deadline: deadline, keystroke: keystrokes)
        var record = StreakRecord(conv: c, user: u, deadline: deadline, keystroke: keystrokes, alarm: key,
                                  started: keystrokes, pairHash: pairHash,
                                  convID: conversations[c].id.fingerprint, userID: users[u].id.fingerprint)
        record.userPrevious = users[u].streaks.last
        let s = streaks.insert(record)
        if record.userPrevious >= 0 {
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
            emit(.typing(Event.Typing(at: now, conv: conversations[c].id, user: users[u].id, state: .started)),
                 to: &sink)
        }
        render(c, scope: .audience, sink: &sink)
    }

    /// A keystroke of live streak `s`: its deadline becomes `deadline`. A later
    /// deadline costs no heap work (the alarm comes due early and is pushed again);
    /// an earlier one gets a new alarm at once.
    mutating func moveDeadline(of s: Int32, to deadline: Int) {
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
    /// indicators of its conversation. O(log typers) but for the render.
    mutating func stop<S: EventSink & ~Copyable>(_ s: Int32, reason: Event.Typing.Reason,
                                                 render shouldRender: Bool, sink: inout S) {
        let record = streaks[s]
        let c = record.conv, u = record.user
        removeTyper(s, from: c)
        if record.userPrevious >= 0 {
            streaks[record.userPrevious].userNext = record.userNext
        } else {
            users[u].streaks.first = record.userNext
        }
        if record.userNext >= 0 {
            streaks[record.userNext].userPrevious = record.userPrevious
        } else {
            users[u].streaks.last = record.userPrevious
        }
        if let slot = conversations[c].slot(of: u) {
            conversations[c].setStreak(-1, at: slot)
        }
        streakIndex.remove(hash: record.pairHash, record: s)
        streaks.remove(s)
        if configuration.typingEvents {
            emit(.typing(Event.Typing(at: now, conv: conversations[c].id, user: users[u].id,
                                      state: .stopped, reason: reason)), to: &sink)
        }
        if shouldRender { render(c, scope: .audience, sink: &sink) }
        compactTimersIfNeeded()
    }

    /// Under `--order recent`: a keystroke by a typer who is not first among the
    /// named (or unnamed) typers moves them to the front, and re-renders, unless
    /// the move happens wholly beyond what anyone sees (the listed ids and the
    /// names in phrases). O(log typers) but for the render.
    mutating func promote<S: EventSink & ~Copyable>(_ s: Int32, sink: inout S) {
        let c = streaks[s].conv
        let front = streaks[s].isNamed ? 0 : conversations[c].typers.namedCount
        guard conversations[c].typers.rank(of: s, in: streaks) != front else { return }
        removeTyper(s, from: c)
        insertTyper(s, in: c)
        if front < max(configuration.maxListed + 1, 3) { render(c, scope: .audience, sink: &sink) }
    }

    /// Puts streak `s` in its place among the typers of `c`: named ones first, each
    /// group in the configured order. O(log typers) comparisons.
    mutating func insertTyper(_ s: Int32, in c: Int32) {
        let named = users[streaks[s].user].isNamed
        streaks[s].isNamed = named
        let point = conversations[c].typers.insertionPoint(for: s, in: streaks) { a, b in
            streaks[a].isNamed != streaks[b].isNamed ? streaks[a].isNamed : precedes(a, b)
        }
        let priority = UInt32(truncatingIfNeeded: Mixer.mix(seed ^ streaks[s].started) >> 32)
        conversations[c].typers.attach(s, at: point, priority: priority, in: &streaks)
        if named { conversations[c].typers.namedCount += 1 }
        conversations[c].longestTyperName = max(conversations[c].longestTyperName,
                                                Int32(clamping: users[streaks[s].user].nameBound))
    }

    /// Takes streak `s` out of the typers of `c`. O(log typers).
    mutating func removeTyper(_ s: Int32, from c: Int32) {
        conversations[c].typers.remove(s, in: &streaks)
        if streaks[s].isNamed { conversations[c].typers.namedCount -= 1 }
        if conversations[c].typers.isEmpty { conversations[c].longestTyperName = 0 }
    }

    /// True when streak `a` is listed before streak `b` of the same group (named
    /// or unnamed), in the configured order (§B).
    func precedes(_ a: Int32, _ b: Int32) -> Bool {
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
