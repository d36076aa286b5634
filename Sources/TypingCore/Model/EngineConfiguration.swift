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

    /// Who receives `indicator` events.
    public enum Audience: String, Sendable, CaseIterable {
        /// Every member of the conversation.
        case members
        /// Only members whose view of the conversation is open (`open`/`close`).
        case open
    }

    /// The order typers are listed in (named typers always come first).
    public enum Order: String, Sendable, CaseIterable {
        /// By when the current streak began, earliest first.
        case start
        /// Most recent keystroke first.
        case recent
        /// By display name (Unicode scalar values), then user id (bytes).
        case name
    }

    /// What a command whose `at` is earlier than the current time gets (manual clock).
    public enum LateAt: String, Sendable, CaseIterable {
        /// A `time_backwards` error; the command changes nothing (the default).
        case refuse
        /// It is applied at the current time, as if it carried no `at`: for several
        /// writers stamping one log, whose stamps interleave a little out of order.
        case clamp
    }

    /// The timeouts a streak may have, in milliseconds (one day at most).
    public static let timeoutRange = 1...86_400_000
    /// The values a limit may have.
    public static let limitRange = 1...Int(Int32.max)
    /// The values `--max-listed` may have.
    public static let maxListedRange = 1...100_000
    /// The values `--max-output-per-line` may have.
    public static let maxOutputPerLineRange = 1...Int.max
    /// The values `--quiet-above` may have.
    public static let quietAboveRange = 1...Int(Int32.max)
    /// The values `--several-after` may have.
    public static let severalAfterRange = 1...Int(Int32.max)
    /// The values `--announce-after-ms` may have (one day at most).
    public static let announceAfterRange = 1...86_400_000

    /// Milliseconds after the last keystroke at which a streak ends.
    public var timeout: Int
    /// How phrases name three typers or more, in chat views.
    public var style: Style
    /// How phrases name three typers or more, in chat-list rows
    /// (Protocol.md#the-chat-list).
    public var listStyle: Style
    /// Whether `typing` events are written.
    public var typingEvents: Bool
    /// The most members one conversation may have.
    public var maxMembers: Int
    /// The most memberships over all conversations.
    public var maxMemberships: Int
    /// The most live conversations.
    public var maxConversations: Int
    /// Who receives `indicator` events.
    public var audience: Audience
    /// The order typers are listed in.
    public var order: Order
    /// The most user ids an `indicator` lists; the others are counted in `more`.
    public var maxListed: Int
    /// The most bytes of events one command may cause (nil: no cap). A command whose
    /// output could exceed it, by ``Engine/outputBound(of:)`` less the forgotten
    /// screens it tells (owed from earlier steps, told whatever the cap), is refused
    /// with `limit` and changes nothing.
    public var maxOutputPerLine: Int?
    /// The phrase tables, and the locale of users who give none
    /// (Protocol.md#languages).
    public var phrases: PhraseBook
    /// What a command whose `at` is earlier than the current time gets.
    public var lateAt: LateAt
    /// In a conversation with more members than this, every screen shows the empty
    /// indicator (nil: no limit; Protocol.md#quiet-large-rooms).
    public var quietAbove: Int?
    /// The most typers a clause names or counts as usual (nil: no limit): a clause
    /// of more is phrased with its table's `several` subject, naming nobody
    /// (Protocol.md#several-people). It changes only the text, not the ids listed.
    public var severalAfter: Int?
    /// Milliseconds a screen's sentence must stay the same before it is announced
    /// once, for screen readers (nil: no announcements;
    /// Protocol.md#announcements-for-screen-readers).
    public var announceAfter: Int?

    /// Creates a configuration; the defaults are the protocol's.
    public init(
        timeout: Int = 3000, style: Style = .group, typingEvents: Bool = false,
        maxMembers: Int = 100_000, maxMemberships: Int = 10_000_000,
        maxConversations: Int = 10_000_000, audience: Audience = .members,
        order: Order = .start, maxListed: Int = 100, maxOutputPerLine: Int? = nil,
        listStyle: Style = .compact, phrases: PhraseBook = .english, lateAt: LateAt = .refuse,
        quietAbove: Int? = nil, severalAfter: Int? = nil, announceAfter: Int? = nil
    ) {
        self.timeout = timeout
        self.style = style
        self.typingEvents = typingEvents
        self.maxMembers = maxMembers
        self.maxMemberships = maxMemberships
        self.maxConversations = maxConversations
        self.audience = audience
        self.order = order
        self.maxListed = maxListed
        self.maxOutputPerLine = maxOutputPerLine
        self.listStyle = listStyle
        self.phrases = phrases
        self.lateAt = lateAt
        self.quietAbove = quietAbove
        self.severalAfter = severalAfter
        self.announceAfter = announceAfter
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
        copy.maxListed = maxListed.clamped(to: Self.maxListedRange)
        copy.maxOutputPerLine = maxOutputPerLine?.clamped(to: Self.maxOutputPerLineRange)
        copy.quietAbove = quietAbove?.clamped(to: Self.quietAboveRange)
        copy.severalAfter = severalAfter?.clamped(to: Self.severalAfterRange)
        copy.announceAfter = announceAfter?.clamped(to: Self.announceAfterRange)
        return copy
    }
}

extension Int {
    /// The value, moved into `range` if outside it.
    package func clamped(to range: ClosedRange<Int>) -> Int {
        Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
    }
}
