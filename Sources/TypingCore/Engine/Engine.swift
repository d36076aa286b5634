/// The typing engine: conversations, members, typing streaks and their timeouts.
///
/// Requests go in through ``apply(_:to:)``, events come out through an
/// ``EventSink``, in the order the protocol prescribes. The engine does no I/O and
/// never reads a clock: time is what requests carry (``Request/at``) or what the
/// caller passes to ``advance(to:sink:)``.
///
/// Every step costs work in proportion to what it changes: the members and typers
/// of the conversations it touches, never the history, other conversations or the
/// user's other memberships. Ids are interned to small integers through seeded hash
/// indexes; a member is found inside their conversation; a user's streaks form a
/// linked list, so stopping one is O(1); a conversation with no members, a user
/// with no memberships and a stopped streak are freed at once, and the storage of
/// each shrinks when it is mostly unused.
///
/// The invariant checker (`checkInvariants()`, compiled only with
/// `TYPINGD_INTERNAL_CHECKS`: debug builds and the fuzzer) checks that the
/// structures agree; the unit tests and the fuzzer call it after every step.
public struct Engine {
    /// The largest time, and the largest `at`: 2^53 − 1 ms, the largest integer a
    /// JSON reader of any language reads exactly.
    public static let maxTime = 9_007_199_254_740_991

    /// The settings the engine was made with (clamped into their ranges).
    public private(set) var configuration: EngineConfiguration
    /// The current time in milliseconds. It starts at 0 and never goes back.
    public internal(set) var now: Int = 0

    /// The key of the hash indexes, random per engine.
    let seed: UInt64
    /// The variant shared views are built in (see ``defaultVariant``).
    let defaultVariantKey: UInt32

    package var users = Slab<UserRecord, UserIndex>(vacant: UserRecord(id: Identifier("")))
    package var userIndex = IndexTable()

    package var conversations = Slab<ConversationRecord, ConversationIndex>(
        vacant: ConversationRecord(id: Identifier("")))
    package var conversationIndex = IndexTable()
    var liveMemberships = 0
    /// Conversations with stale members (see ``ConversationRecord/staleSlots``): while
    /// there are none, a keystroke of a typer who stays where they are does not read
    /// their conversation's record at all.
    var staleConversations = 0
    /// Every membership in its user's list, in join order (see ``MembershipLink``).
    var memberships = Slab<MembershipLink, MembershipIndex>(vacant: MembershipLink.vacant)
    /// The locale of each user who gave one (Protocol.md#languages), with the table
    /// it chose.
    package var locales = ShrinkingDictionary<UserIndex, UserLocale>()
    /// The name each user gave, where their display name is not that name (it was
    /// cut or cleaned): what `snapshot` lists, so that a rebuild that joins with it
    /// gets the same display name (cutting a cut name again would not).
    package var givenNames = ShrinkingDictionary<UserIndex, String>()
    /// For each user with an open view, the conversations whose view is open: so
    /// that `offline` closes them without looking at every membership, and closing
    /// one costs O(1) however many are open.
    package var openViews = OpenViews()
    /// The side panes of each user: user → the conversations where they have one
    /// (Protocol.md#side-panes), so that `offline` removes them in O(their number).
    package var sidePanes = OpenViews()
    /// Pending announcements and what each screen last announced (only with
    /// `--announce-after-ms`; Protocol.md#announcements-for-screen-readers).
    package var announcements = Announcements()

    package var streaks = Slab<StreakRecord, StreakIndex>(vacant: StreakRecord.vacant)
    /// The words of each live streak whose activity is ``Activity/status``
    /// (Protocol.md#status-in-ones-own-words), beside the records: few streaks have
    /// them, and a record stays 168 bytes.
    package var statusWords = ShrinkingDictionary<StreakIndex, String>()
    /// Live streaks by (conversation id, user id): the fast path of keystrokes.
    package var streakIndex = IndexTable()
    package var timers = TimerQueue()
    /// The first typers of each location being rendered (reused storage).
    package var renderHeads: [[StreakIndex]] = [[], [], [], []]
    /// Keystrokes so far: the next keystroke's number.
    var keystrokes: UInt64 = 0

    /// Whether this build has the invariant checker (debug builds and the fuzzer's).
    #if TYPINGD_INTERNAL_CHECKS
    package static let hasInvariantChecker = true
    #else
    package static let hasInvariantChecker = false
    #endif

    #if TYPINGD_INTERNAL_CHECKS
    /// Viewers compared by renders so far: for tests of what a render costs.
    package var viewersCompared = 0
    /// Stored variants read to find or store one, so far: for tests that finding a
    /// viewer's phrase costs the same however many languages their room reads.
    package var variantEntriesRead = 0
    #endif

    package var commandsApplied = 0
    var errorsWritten = 0
    var eventsWritten = 0

    /// Sets `--max-output-per-line` (nil: no cap) from now on: for a process that
    /// rebuilds its state from a snapshot without the cap (the rebuild's commands
    /// render rooms as they fill), then runs under it.
    package mutating func setMaxOutputPerLine(_ cap: Int?) {
        var changed = configuration
        changed.maxOutputPerLine = cap
        configuration = changed.clamped
    }

    /// Creates an empty engine at time 0. Values of `configuration` outside their
    /// ranges are clamped into them.
    public init(configuration: EngineConfiguration = .defaults) {
        self.configuration = configuration.clamped
        self.seed = UInt64.random(in: .min ... .max)
        self.defaultVariantKey = Engine.variant(table: UInt16(configuration.phrases.defaultTable), list: false)
    }

    /// Live conversations (those with at least one member).
    public var conversationCount: Int { conversations.count }
    /// Memberships over all conversations.
    public var membershipCount: Int { liveMemberships }
    /// Active typing streaks.
    public var typingCount: Int { streaks.count }
    /// Open views (`open` commands not yet closed), of all users.
    package var openViewCount: Int { openViews.count }

    /// Sends `event` to `sink`, keeping the counters `stats` reports.
    mutating func emit<S: EventSink & ~Copyable>(_ event: Event, to sink: inout S) {
        eventsWritten += 1
        if case .error = event { errorsWritten += 1 }
        sink.emit(event)
    }
}

extension Engine {
    /// The interned number of user `id`, if they are known.
    @inline(__always)
    package func findUser(_ id: Identifier) -> UserIndex? {
        userIndex.find(hash: id.hash(seed: seed)) { users[$0].id == id }
    }

    /// The interned number of conversation `id`, if it is live.
    @inline(__always)
    package func findConversation(_ id: Identifier) -> ConversationIndex? {
        conversationIndex.find(hash: id.hash(seed: seed)) { conversations[$0].id == id }
    }

    /// The hash of the pair (conversation `conv`, user `user`).
    @inline(__always)
    func pairHash(conv: Identifier, user: Identifier) -> UInt64 {
        Mixer.mix(conv.hash(seed: seed) &+ user.hash(seed: ~seed))
    }

    /// The live streak of `user` in `conv`, found without looking at the
    /// conversation or its members (the common case of a keystroke while typing).
    @inline(__always)
    func findStreak(conv: Identifier, user: Identifier, hash: UInt64) -> StreakIndex? {
        let convID = conv.fingerprint, userID = user.fingerprint
        return streakIndex.find(hash: hash) { s in
            let streak = streaks[s]
            guard streak.convID == convID, streak.userID == userID else { return false }
            if convID.isComplete && userID.isComplete { return true }
            return conversations[streak.conv].id == conv && users[streak.user].id == user
        }
    }
}

/// A user's locale (Protocol.md#languages): the tag as last given, and the table it
/// chose.
package struct UserLocale {
    var tag: String
    var table: UInt16
}
