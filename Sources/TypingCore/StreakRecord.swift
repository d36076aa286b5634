/// A typing streak: from the first keystroke until it stops.
struct StreakRecord {
    /// The conversation typed in.
    var conv: Int32
    /// The typer.
    var user: Int32
    /// When it times out: the last keystroke + the timeout.
    var deadline: Int
    /// The global number of the keystroke that set `deadline` (breaks deadline ties).
    var keystroke: UInt64
    /// Bumped each time the slot is freed, so stale timer entries can tell.
    var generation: UInt32
    /// False while the slot is free.
    var isLive: Bool
    /// The hash of (conversation, user) the streak is filed under in the live index.
    var pairHash: UInt64
    /// The conversation's id, inline (complete for ids of up to 16 bytes).
    var convID: Identifier.Fingerprint
    /// The typer's id, inline.
    var userID: Identifier.Fingerprint
}
