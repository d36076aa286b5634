/// The engine's settings, fixed for the life of the process.
public struct EngineConfiguration: Sendable, Equatable {
    /// The longest timeout accepted, one day in milliseconds.
    public static let maxTimeout = 86_400_000

    /// Milliseconds after the last keystroke at which a streak ends (1 … ``maxTimeout``).
    public var timeout: Int
    /// How phrases name three typers or more.
    public var style: PhraseStyle
    /// Whether `typing` events are written.
    public var typingEvents: Bool
    /// The most members one conversation may have.
    public var maxMembers: Int
    /// The most memberships over all conversations.
    public var maxMemberships: Int
    /// The most live conversations.
    public var maxConversations: Int

    /// Creates a configuration; the defaults are the protocol's.
    public init(timeout: Int = 3000, style: PhraseStyle = .group, typingEvents: Bool = false,
                maxMembers: Int = 100_000, maxMemberships: Int = 10_000_000,
                maxConversations: Int = 10_000_000) {
        self.timeout = timeout
        self.style = style
        self.typingEvents = typingEvents
        self.maxMembers = maxMembers
        self.maxMemberships = maxMemberships
        self.maxConversations = maxConversations
    }
}
