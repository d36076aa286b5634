/// A `typing` event (only with `--typing-events`): a streak started or stopped.
public struct TypingChange: Sendable, Equatable {
    /// Whether the streak started or stopped.
    public enum State: String, Sendable {
        /// The user started typing.
        case started
        /// The user stopped typing.
        case stopped
    }

    /// The time of the step, in milliseconds.
    public var at: Int
    /// The conversation.
    public var conv: Identifier
    /// The typer.
    public var user: Identifier
    /// Started or stopped.
    public var state: State
    /// Why it stopped (nil when it started).
    public var reason: StopReason?

    /// Creates a typing event.
    public init(at: Int, conv: Identifier, user: Identifier, state: State, reason: StopReason? = nil) {
        self.at = at
        self.conv = conv
        self.user = user
        self.state = state
        self.reason = reason
    }
}
