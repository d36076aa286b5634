/// A `stats` event: the reply to `stats`.
public struct StatsReply: Sendable, Equatable {
    /// The current time, in milliseconds.
    public var at: Int
    /// The stats command's id.
    public var id: RequestID?
    /// Lines read, blank ones included (this one included).
    public var lines: Int
    /// Commands applied (this one included).
    public var commands: Int
    /// `error` events written.
    public var errors: Int
    /// Live conversations (those with at least one member).
    public var conversations: Int
    /// Memberships, over all conversations.
    public var members: Int
    /// Active typing streaks.
    public var typing: Int
    /// Events written before this one.
    public var events: Int

    /// Creates a stats reply.
    public init(at: Int, id: RequestID?, lines: Int, commands: Int, errors: Int,
                conversations: Int, members: Int, typing: Int, events: Int) {
        self.at = at
        self.id = id
        self.lines = lines
        self.commands = commands
        self.errors = errors
        self.conversations = conversations
        self.members = members
        self.typing = typing
        self.events = events
    }
}
