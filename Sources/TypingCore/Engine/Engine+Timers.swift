extension Engine {
    /// Moves the clock to `time`, first firing every timeout due at or before it,
    /// one step each, in (deadline, keystroke) order. A `time` in the past only
    /// fires what is due; the clock never goes back, nor past ``maxTime``.
    @inlinable
    public mutating func advance<S: EventSink & ~Copyable>(to time: Int, sink: inout S) {
        EventTarget.with(&sink) { target in advanceClock(to: time, sink: &target) }
    }

    /// ``advance(to:sink:)`` for the engine's own target. Inline: it runs for
    /// every request, and usually fires nothing.
    @usableFromInline @inline(__always)
    mutating func advanceClock(to time: Int, sink: inout EventTarget) {
        fireTimeouts(through: time, sink: &sink)
        now = min(max(now, time), Engine.maxTime)
    }

    /// Fires every remaining timeout at its deadline, in order (end of input).
    @inlinable
    public mutating func drain<S: EventSink & ~Copyable>(sink: inout S) {
        EventTarget.with(&sink) { target in fireTimeouts(through: Int.max, sink: &target) }
    }

    /// The earliest deadline of a live streak or pending announcement, if any: the
    /// time to wake up at.
    public mutating func nextDeadline() -> Int? {
        let timeout = nextTimeout()
        guard configuration.announceAfter != nil, let announcement = announcements.nextDue() else { return timeout }
        return min(timeout ?? Int.max, announcement)
    }

    /// The earliest deadline of a live streak, if any.
    mutating func nextTimeout() -> Int? {
        while let top = timers.min {
            switch classify(top) {
            case .due: return top.key.deadline
            case .stale: timers.removeMin()
            case .early(let real):
                timers.removeMin()
                rearm(top.streak, at: real)
            }
        }
        return nil
    }

    /// What an entry at the top of the timer queue stands for now.
    enum TimerStatus {
        /// Its streak ends at this entry's deadline.
        case due
        /// It is not its streak's alarm (the streak stopped, or has a newer alarm).
        case stale
        /// It is its streak's alarm, but the deadline moved later, to this key.
        case early(TimerQueue.Key)
    }

    /// Compares `entry` with its streak. A freed record's alarm (keystroke 0) never
    /// matches a real entry's (keystrokes are numbered from 1), so the record alone
    /// says whether the entry is its streak's alarm.
    func classify(_ entry: TimerQueue.Entry) -> TimerStatus {
        guard Int(entry.streak.rawValue) < streaks.records.count, streaks[entry.streak].alarm == entry.key else {
            return .stale
        }
        let real = streaks[entry.streak].key
        return real == entry.key ? .due : .early(real)
    }

    /// Makes `key` the alarm of streak `s`.
    mutating func rearm(_ s: StreakIndex, at key: TimerQueue.Key) {
        streaks[s].alarm = key
        timers.insert(TimerQueue.Entry(key: key, streak: s))
    }

    /// Fires the timeouts and announcements due at or before `time`, in time order
    /// (at the same time, timeouts first); each is one step at its time.
    @usableFromInline
    mutating func fireTimeouts(through time: Int, sink: inout EventTarget) {
        guard configuration.announceAfter != nil else { return fireStreakTimeouts(through: time, sink: &sink) }
        while true {
            let timeout = nextTimeout(), announcement = announcements.nextDue()
            if let timeout, timeout <= time, timeout <= announcement ?? Int.max {
                fireStreakTimeouts(through: timeout, sink: &sink)
            } else if let announcement, announcement <= time {
                fireAnnouncements(through: announcement, sink: &sink)
            } else {
                return
            }
        }
    }

    /// Fires the announcements due at or before `time`, in the order they were
    /// scheduled: each writes the screen's sentence unless it is what the screen
    /// last announced (Protocol.md#announcements-for-screen-readers).
    mutating func fireAnnouncements(through time: Int, sink: inout EventTarget) {
        while let (screen, due) = announcements.takeDue(through: time) {
            now = max(now, due)
            let c = screen.conv, u = screen.user
            guard conversations.contains(c), users.contains(u), let slot = conversations[c].slot(of: u) else {
                continue
            }
            let view = screen.side ? conversations[c].sideLastSent(of: slot) : conversations[c].lastSent(of: slot)
            let text = view.text
            // Byte for byte, as indicators are compared: "Zoë" in NFC after "Zoë" in
            // NFD is a new sentence, whose indicator was written.
            guard !text.isEmpty, !text.sameBytes(as: announcements.lastAnnounced(screen)) else { continue }
            announcements.setAnnounced(text, for: screen)
            let member = conversations[c].members[slot]
            let location = screen.side ? member.side : member.location
            let thread = location > .main ? conversations[c].threads[location].id : nil
            emit(
                .announce(
                    Event.Announce(
                        at: now, conv: conversations[c].id, thread: thread, viewer: users[u].id,
                        pane: screen.side ? .side : .main,
                        screen: !screen.side && member.isList ? .list : .chat, text: text)),
                to: &sink)
        }
    }

    /// Fires the streaks' timeouts due at or before `time`; each is one step at its
    /// deadline.
    mutating func fireStreakTimeouts(through time: Int, sink: inout EventTarget) {
        while let top = timers.min, top.key.deadline <= time {
            timers.removeMin()
            switch classify(top) {
            case .stale:
                continue
            case .early(let real):
                rearm(top.streak, at: real)
            case .due:
                now = max(now, top.key.deadline)
                stop(top.streak, reason: .timeout, render: true, sink: &sink)
            }
        }
    }

    /// Rebuilds the timer queue from the live streaks' alarms when stale entries
    /// (of streaks stopped before their deadline) outnumber live ones, so a clock
    /// that never advances cannot make it grow without bound.
    mutating func compactTimersIfNeeded() {
        guard timers.needsCompaction(live: streaks.count) else { return }
        var live: [TimerQueue.Entry] = []
        live.reserveCapacity(streaks.count)
        streaks.forEachLive { s, streak in live.append(TimerQueue.Entry(key: streak.alarm, streak: s)) }
        timers.rebuild(live)
    }
}
