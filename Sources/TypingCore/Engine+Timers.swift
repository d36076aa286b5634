import HeapModule

extension Engine {
    /// Moves the clock to `time`, first firing every timeout due at or before it,
    /// one step each, in (deadline, keystroke) order. A `time` in the past only
    /// fires what is due; the clock never goes back.
    public mutating func advance<S: EventSink>(to time: Int, sink: inout S) {
        fireTimeouts(through: time, sink: &sink)
        now = max(now, time)
    }

    /// Fires every remaining timeout at its deadline, in order (end of input).
    public mutating func drain<S: EventSink>(sink: inout S) {
        fireTimeouts(through: Int.max, sink: &sink)
    }

    /// The earliest deadline of a live streak, if any; the time to wake up at.
    public mutating func nextDeadline() -> Int? {
        while let top = timers.min {
            switch classify(top) {
            case .due: return top.deadline
            case .stale: timers.removeMin()
            case .moved(let entry):
                timers.removeMin()
                timers.insert(entry)
            }
        }
        return nil
    }

    /// What a timer entry at the top of the heap stands for now.
    enum TimerStatus {
        /// The streak ends at this entry's deadline.
        case due
        /// The streak is gone.
        case stale
        /// The streak's deadline moved: this is its real entry.
        case moved(TimerEntry)
    }

    /// Compares `entry` with its streak.
    func classify(_ entry: TimerEntry) -> TimerStatus {
        let streak = streaks[Int(entry.streak)]
        guard streak.isLive, streak.generation == entry.generation else { return .stale }
        if streak.deadline == entry.deadline && streak.keystroke == entry.keystroke { return .due }
        return .moved(TimerEntry(deadline: streak.deadline, keystroke: streak.keystroke,
                                 streak: entry.streak, generation: entry.generation))
    }

    /// Fires the timeouts due at or before `time`; each is one step at its deadline.
    mutating func fireTimeouts<S: EventSink>(through time: Int, sink: inout S) {
        while let top = timers.min, top.deadline <= time {
            timers.removeMin()
            switch classify(top) {
            case .stale:
                continue
            case .moved(let entry):
                timers.insert(entry)
            case .due:
                now = max(now, top.deadline)
                stop(top.streak, reason: .timeout, render: true, sink: &sink)
            }
        }
    }

    /// Rebuilds the heap from live streaks when stale entries (of streaks stopped
    /// before their deadline) outnumber live ones, so a clock that never advances
    /// cannot make the heap grow without bound.
    mutating func compactTimersIfNeeded() {
        guard timers.count > 2 * streaks.count + 1024 else { return }
        var live: [TimerEntry] = []
        live.reserveCapacity(streakIndex.count)
        for (index, streak) in streaks.enumerated() where streak.isLive {
            live.append(TimerEntry(deadline: streak.deadline, keystroke: streak.keystroke,
                                   streak: Int32(index), generation: streak.generation))
        }
        timers = Heap(live)
    }
}
