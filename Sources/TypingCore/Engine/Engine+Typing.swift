extension Engine {
    /// `type`: start a streak, move its deadline, or (with `empty`) stop it.
    mutating func keystroke<S: EventSink & ~Copyable>(conv: Identifier, user: Identifier, empty: Bool,
                                                      sink: inout S) -> Failure? {
        let pair = pairHash(conv: conv, user: user)
        if let streak = findStreak(conv: conv, user: user, hash: pair) {
            if empty {
                stop(streak, reason: .empty, render: true, sink: &sink)
            } else {
                moveDeadline(of: streak, to: deadline(after: configuration.timeout))
            }
            return nil
        }
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        // Not typing here (the live index would have found the streak).
        if empty { return nil }
        startStreak(conv: c, user: u, slot: slot, deadline: deadline(after: configuration.timeout),
                    pairHash: pair, sink: &sink)
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

    /// `offline`: every streak of the user stops, in the order they began. Each
    /// stop is O(1) plus its render, however many conversations the user is in.
    /// An unknown user has no streaks, so this is then a no-op.
    mutating func offline<S: EventSink & ~Copyable>(user: Identifier, sink: inout S) {
        guard let u = findUser(user) else { return }
        var s = users[u].streaks.first
        while s >= 0 {
            let next = streaks[s].userNext
            stop(s, reason: .offline, render: true, sink: &sink)
            s = next
        }
    }

    /// The deadline of a keystroke now with `timeout`; it never overflows.
    func deadline(after timeout: Int) -> Int {
        let (sum, overflow) = now.addingReportingOverflow(timeout)
        return overflow ? Int.max : sum
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
        users[u].streaks.count += 1
        streakIndex.insert(hash: pairHash, record: s)
        timers.insert(TimerQueue.Entry(key: key, streak: s))
        conversations[c].typers.append(s)
        conversations[c].setStreak(s, at: slot)
        if configuration.typingEvents {
            emit(.typing(Event.Typing(at: now, conv: conversations[c].id, user: users[u].id, state: .started)),
                 to: &sink)
        }
        render(c, scope: .everyone, sink: &sink)
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
        }
    }

    /// Stops streak `s` for `reason`: the `typing` event, then (if `render`) the
    /// indicators of its conversation. O(1) but for the conversation's typers.
    mutating func stop<S: EventSink & ~Copyable>(_ s: Int32, reason: Event.Typing.Reason,
                                                 render shouldRender: Bool, sink: inout S) {
        let record = streaks[s]
        let c = record.conv, u = record.user
        if let index = conversations[c].typers.firstIndex(of: s) {
            conversations[c].typers.remove(at: index)
        }
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
        users[u].streaks.count -= 1
        if let slot = conversations[c].slot(of: u) {
            conversations[c].setStreak(-1, at: slot)
        }
        streakIndex.remove(hash: record.pairHash, record: s)
        streaks.remove(s)
        if configuration.typingEvents {
            emit(.typing(Event.Typing(at: now, conv: conversations[c].id, user: users[u].id,
                                      state: .stopped, reason: reason)), to: &sink)
        }
        if shouldRender { render(c, scope: .everyone, sink: &sink) }
        compactTimersIfNeeded()
    }
}
