/// The engine's settings, fixed for the life of the process.
///
/// The defaults and ranges here are the protocol's, and the only copy of them: the
/// command line takes its defaults and checks its values from these declarations.
/// The engine never traps on a value outside a range: it clamps it into the range.
public struct EngineConfiguration: Sendable, Equatable {
    /// How an indicator names more than two typers.
    public enum Style: String, Sendable, CaseIterable {
        /// "A, B, and C are typing...", "A, B, and 2 others are typing..." (the default).
        case group
        /// "A and 2 others are typing..."
        case compact
    }

    /// The timeouts a streak may have, in milliseconds (one day at most).
    public static let timeoutRange = 1...86_400_000
    /// The values a limit may have.
    public static let limitRange = 1...Int(Int32.max)

    /// Milliseconds after the last keystroke at which a streak ends.
    public var timeout: Int
    /// How phrases name three typers or more.
    public var style: Style
    /// Whether `typing` events are written.
    public var typingEvents: Bool
    /// The most members one conversation may have.
    public var maxMembers: Int
    /// The most memberships over all conversations.
    public var maxMemberships: Int
    /// The most live conversations.
    public var maxConversations: Int

    /// Creates a configuration; the defaults are the protocol's.
    public init(timeout: Int = 3000, style: Style = .group, typingEvents: Bool = false,
                maxMembers: Int = 100_000, maxMemberships: Int = 10_000_000,
                maxConversations: Int = 10_000_000) {
        self.timeout = timeout
        self.style = style
        self.typingEvents = typingEvents
        self.maxMembers = maxMembers
        self.maxMemberships = maxMemberships
        self.maxConversations = maxConversations
    }

    /// The protocol's defaults.
    public static let defaults = EngineConfiguration()

    /// This configuration with every value clamped into its range.
    var clamped: EngineConfiguration {
        var copy = self
        copy.timeout = timeout.clamped(to: Self.timeoutRange)
        copy.maxMembers = maxMembers.clamped(to: Self.limitRange)
        copy.maxMemberships = maxMemberships.clamped(to: Self.limitRange)
        copy.maxConversations = maxConversations.clamped(to: Self.limitRange)
        return copy
    }
}

extension Int {
    /// The value, moved into `range` if outside it.
    func clamped(to range: ClosedRange<Int>) -> Int {
        Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
    }
}
