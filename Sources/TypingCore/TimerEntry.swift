/// A pending timeout in the engine's heap.
///
/// The heap holds at most one entry per streak, keyed by a deadline that may be
/// earlier than the streak's real one: keystrokes only move the streak's deadline,
/// and an entry that comes due early is pushed again with the real deadline. Every
/// entry's key is therefore at most its streak's real key, which keeps the heap's
/// minimum right while a keystroke costs no heap work at all.
struct TimerEntry: Comparable {
    /// When the entry comes due.
    var deadline: Int
    /// The keystroke that set the deadline: timeouts with equal deadlines fire in
    /// keystroke order.
    var keystroke: UInt64
    /// The streak slot.
    var streak: Int32
    /// The slot's generation when pushed; a mismatch means the streak is gone.
    var generation: UInt32

    static func < (lhs: TimerEntry, rhs: TimerEntry) -> Bool {
        (lhs.deadline, lhs.keystroke) < (rhs.deadline, rhs.keystroke)
    }

    static func == (lhs: TimerEntry, rhs: TimerEntry) -> Bool {
        lhs.deadline == rhs.deadline && lhs.keystroke == rhs.keystroke
    }
}
