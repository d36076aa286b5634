extension Engine {
    /// `type`: start a streak, move its deadline, or (with `empty`) stop it.
    mutating func keystroke<S: EventSink>(conv: Identifier, user: Identifier, empty: Bool,
                                          sink: inout S) -> Failure? {
        let pair = pairHash(conv: conv, user: user)
        if let streak = findStreak(conv: conv, user: user, hash: pair) {
            if empty {
                stop(streak, reason: .empty, render: true, sink: &sink)
            } else {
                keystrokes += 1
                streaks[Int(streak)].deadline = now + configuration.timeout
                streaks[Int(streak)].keystroke = keystrokes
            }
            return nil
        }
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        // Not typing here (the live index would have found the streak).
        if empty { return nil }
        keystrokes += 1
        startStreak(conv: c, user: u, slot: slot, deadline: now + configuration.timeout, pairHash: pair,
                    sink: &sink)
        return nil
    }

    /// `send`: the streak, if any, stops at once.
    mutating func send<S: EventSink>(conv: Identifier, user: Identifier, sink: inout S) -> Failure? {
        if let streak = findStreak(conv: conv, user: user, hash: pairHash(conv: conv, user: user)) {
            stop(streak, reason: .send, render: true, sink: &sink)
            return nil
        }
        guard membership(of: user, in: conv) != nil else {
            return .notMember(user, of: conv, field: "user")
        }
        return nil
    }

    /// `offline`: every streak of the user stops, in the order they began.
    /// An unknown user has no streaks, so this is then a no-op.
    mutating func offline<S: EventSink>(user: Identifier, sink: inout S) {
        guard let u = findUser(user) else { return }
        for streak in users[u].streaks {
            stop(streak, reason: .offline, render: true, sink: &sink)
        }
    }

    /// Starts a streak of member `slot` (user `u`) in `c`, ending at `deadline`.
    mutating func startStreak<S: EventSink>(conv c: Int32, user u: Int32, slot: Int, deadline: Int,
                                            pairHash: UInt64, sink: inout S) {
        let record = StreakRecord(conv: c, user: u, deadline: deadline, keystroke: keystrokes,
                                  generation: 0, isLive: true, pairHash: pairHash,
                                  convID: conversations[c].id.fingerprint,
                                  userID: users[u].id.fingerprint)
        let s: Int32
        if let free = freeStreaks.popLast() {
            s = free
            let generation = streaks[Int(s)].generation
            streaks[Int(s)] = record
            streaks[Int(s)].generation = generation
        } else {
            s = Int32(streaks.count)
            streaks.append(record)
        }
        streakIndex.insert(hash: pairHash, record: s)
        timers.insert(TimerEntry(deadline: deadline, keystroke: keystrokes, streak: s,
                                 generation: streaks[Int(s)].generation))
        conversations[c].typers.append(s)
        conversations[c].setStreak(s, at: slot)
        users[u].streaks.append(s)
        if configuration.typingEvents {
            emit(.typing(TypingChange(at: now, conv: conversations[c].id, user: users[u].id,
                                      state: .started)), to: &sink)
        }
        render(c, scope: .everyone, sink: &sink)
    }

    /// Stops streak `s` for `reason`: the `typing` event, then (if `render`) the
    /// indicators of its conversation.
    mutating func stop<S: EventSink>(_ s: Int32, reason: StopReason, render shouldRender: Bool,
                                     sink: inout S) {
        let record = streaks[Int(s)]
        let c = record.conv, u = record.user
        if let index = conversations[c].typers.firstIndex(of: s) {
            conversations[c].typers.remove(at: index)
        }
        if let index = users[u].streaks.firstIndex(of: s) {
            users[u].streaks.remove(at: index)
        }
        if let slot = conversations[c].slot(of: u) {
            conversations[c].setStreak(-1, at: slot)
        }
        streakIndex.remove(hash: record.pairHash, record: s)
        streaks[Int(s)].isLive = false
        streaks[Int(s)].generation &+= 1
        freeStreaks.append(s)
        if configuration.typingEvents {
            emit(.typing(TypingChange(at: now, conv: conversations[c].id, user: users[u].id,
                                      state: .stopped, reason: reason)), to: &sink)
        }
        if shouldRender { render(c, scope: .everyone, sink: &sink) }
        compactTimersIfNeeded()
    }
}
