import HeapModule

/// The typing engine: conversations, members, typing streaks and their timeouts.
///
/// Requests go in, events come out through an ``EventSink``, in the order the
/// protocol prescribes. The engine does no I/O and never reads a clock: time is
/// what requests carry (``Request/at``) or what the caller passes to
/// ``advance(to:sink:)``.
///
/// Every step costs work in proportion to the members and typers of the
/// conversations it touches, never to the history or to other conversations: ids
/// are interned to small integers, memberships live in one hash table, a
/// conversation with no members is freed, and the timer heap holds at most one
/// entry per streak (see ``TimerEntry``).
public struct Engine {
    /// The settings the engine was made with.
    public let configuration: EngineConfiguration
    /// The current time in milliseconds. It starts at 0 and never goes back.
    public internal(set) var now: Int = 0

    var users: [UserRecord] = []
    var freeUsers: [Int32] = []
    var userIndex: [Identifier: Int32] = [:]

    var conversations: [ConversationRecord] = []
    var freeConversations: [Int32] = []
    var conversationIndex: [Identifier: Int32] = [:]

    /// Conversation and user packed into one key → the member's slot index.
    var memberships: [UInt64: Int32] = [:]

    var streaks: [StreakRecord] = []
    var freeStreaks: [Int32] = []
    var timers = Heap<TimerEntry>()
    var keystrokes: UInt64 = 0

    var liveConversations = 0
    var liveStreaks = 0
    var commandsApplied = 0
    var errorsWritten = 0
    var eventsWritten = 0

    /// Creates an empty engine at time 0.
    public init(configuration: EngineConfiguration = EngineConfiguration()) {
        self.configuration = configuration
    }

    /// Live conversations (those with at least one member).
    public var conversationCount: Int { liveConversations }
    /// Memberships over all conversations.
    public var membershipCount: Int { memberships.count }
    /// Active typing streaks.
    public var typingCount: Int { liveStreaks }
    /// Events emitted so far, errors included.
    public var eventCount: Int { eventsWritten }
    /// `error` events emitted so far.
    public var errorCount: Int { errorsWritten }
    /// Commands applied so far.
    public var commandCount: Int { commandsApplied }

    /// Sends `event` to `sink`, keeping the counters `stats` reports.
    mutating func emit<S: EventSink>(_ event: Event, to sink: inout S) {
        eventsWritten += 1
        if case .error = event { errorsWritten += 1 }
        sink.emit(event)
    }
}
