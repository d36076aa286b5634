/// A `state` event: the reply to `query`.
public struct StateReply: Sendable, Equatable {
    /// The current time, in milliseconds.
    public var at: Int
    /// The query's id.
    public var id: RequestID?
    /// The conversation asked about.
    public var conv: Identifier
    /// Its members in join order (empty for an unknown conversation).
    public var members: [Identifier]
    /// Its typers in streak order.
    public var typing: [Identifier]

    /// Creates a state reply.
    public init(at: Int, id: RequestID?, conv: Identifier, members: [Identifier], typing: [Identifier]) {
        self.at = at
        self.id = id
        self.conv = conv
        self.members = members
        self.typing = typing
    }
}
