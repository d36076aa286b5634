extension Engine {
    /// Moves the clock to `time`, first firing every timeout due at or before it,
    /// one step each, in (deadline, keystroke) order. A `time` in the past only
    /// fires what is due; the clock never goes back, nor past ``maxTime``.
    @inlinable
    public mutating func advance<S: EventSink & ~Copyable>(to time: Int, sink: inout S) {
        EventTarget.with(&sink) { target in advanceClock(to: time, sink: &target) }
    }

    /// ``advance(to:sink:)`` for the engine's own target.
    @usableFromInline
    mutating func advanceClock(to time: Int, sink: inout EventTarget) {
        fireTimeouts(through: time, sink: &sink)
        now = min(max(now, time), Engine.maxTime)
    }

    /// Fires every remaining timeout at its deadline, in order (end of input).
    @inlinable
    public mutating func drain<S: EventSink & ~Copyable>(sink: inout S) {
        EventTarget.with(&sink) { target in fireTimeouts(through: Int.max, sink: &target) }
    }

    /// The earliest deadline of a live streak, if any: the time to wake up at.
    public mutating func nextDeadline() -> Int? {
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
        guard Int(entry.streak.rawValue) < streaks.records.count, streaks[entry.streak].alarm == entry.key else { return .stale }
        let real = streaks[entry.streak].key
        return real == entry.key ? .due : .early(real)
    }

    /// Makes `key` the alarm of streak `s`.
    mutating func rearm(_ s: StreakIndex, at key: TimerQueue.Key) {
        streaks[s].alarm = key
        timers.insert(TimerQueue.Entry(key: key, streak: s))
    }

    /// Fires the timeouts due at or before `time`; each is one step at its deadline.
    @usableFromInline
    mutating func fireTimeouts(through time: Int, sink: inout EventTarget) {
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
