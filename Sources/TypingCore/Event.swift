/// Everything typingd writes on stdout, one event per line.
public enum Event: Sendable, Equatable {
    /// What a viewer sees changed.
    case indicator(Indicator)
    /// A streak started or stopped (`--typing-events` only).
    case typing(TypingChange)
    /// A command with an id was applied.
    case ok(Acknowledgement)
    /// A line was not applied.
    case error(ErrorReport)
    /// The reply to `query`.
    case state(StateReply)
    /// The reply to `stats`.
    case stats(StatsReply)
}
