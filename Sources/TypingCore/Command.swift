/// What a command line asks the engine to do, with its validated fields.
///
/// The decoder produces a `Command` only when every field has the right type and
/// size; the engine then checks what depends on state (membership, limits, time).
public enum Command: Sendable, Equatable {
    /// `user` becomes a member of `conv`; `name`, when given, sets the display name.
    case join(conv: Identifier, user: Identifier, name: String?)
    /// A keystroke in `user`'s input box; `empty` means the box is now empty.
    case type(conv: Identifier, user: Identifier, empty: Bool)
    /// `user` sent a message: their streak in `conv` stops at once.
    case send(conv: Identifier, user: Identifier)
    /// `user` leaves `conv`.
    case leave(conv: Identifier, user: Identifier)
    /// `user` is removed from `conv`, optionally by member `by`.
    case remove(conv: Identifier, user: Identifier, by: Identifier?)
    /// `user` went offline: all their streaks stop.
    case offline(user: Identifier)
    /// Advances the manual clock (the time is the request's `at`).
    case tick
    /// Asks for the members and typers of `conv`.
    case query(conv: Identifier)
    /// Asks for the daemon's counters.
    case stats

    /// The command's name as written in the `cmd` field.
    public var name: String {
        switch self {
        case .join: return "join"
        case .type: return "type"
        case .send: return "send"
        case .leave: return "leave"
        case .remove: return "remove"
        case .offline: return "offline"
        case .tick: return "tick"
        case .query: return "query"
        case .stats: return "stats"
        }
    }
}
