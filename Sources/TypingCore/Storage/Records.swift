/// What the engine knows about a user while they are a member somewhere.
struct UserRecord {
    /// The user's id.
    var id: Identifier
    /// The display name shown in phrases (``DisplayName/unknown`` when unnamed).
    var displayName: String
    /// False while the user has no display name of their own (§C).
    var isNamed = false
    /// Whether others see this user type (`send_typing`).
    var sendsTyping = true
    /// How many conversations the user is a member of; the record goes at zero.
    var memberships: Int32
    /// The user's live streaks, a list linked through ``StreakRecord/userNext`` in the
    /// order they began (so stopping one is O(1), wherever it is in the list).
    var streaks = StreakList()

    // The record fits one 64-byte cache line: it is read on every streak start and
    // stop. What only views need (a user's open views) is kept beside it, in
    // ``Engine/openViews``.

    /// The most bytes the display name takes inside a JSON string: display names
    /// hold no control character, so an escape at most doubles a byte (`"`, `\`,
    /// U+2028, U+2029).
    var nameBound: Int { displayName.utf8.count * 2 }

    /// A user with no name yet and no memberships.
    init(id: Identifier) {
        self.id = id
        self.displayName = DisplayName.unknown
        self.memberships = 0
    }
}

/// The ends of a doubly linked list of streaks (-1: none).
struct StreakList: Equatable {
    var first: Int32 = -1
    var last: Int32 = -1
}

/// A typing streak: from the first keystroke until it stops.
struct StreakRecord {
    /// The conversation typed in.
    var conv: Int32
    /// The typer.
    var user: Int32
    /// When it times out: the last keystroke + the timeout.
    var deadline: Int
    /// The global number of the keystroke that set `deadline` (breaks deadline ties).
    var keystroke: UInt64
    /// The key of the streak's one entry in the timer queue, which is never later
    /// than (`deadline`, `keystroke`): see ``TimerQueue``.
    var alarm: TimerQueue.Key
    /// The global number of the keystroke that started the streak: streak order.
    var started: UInt64
    /// The hash of (conversation, user) the streak is filed under in the live index.
    var pairHash: UInt64
    /// The conversation's id, inline (complete for ids of up to 16 bytes).
    var convID: Identifier.Fingerprint
    /// The typer's id, inline.
    var userID: Identifier.Fingerprint
    /// The neighbours in the user's list of streaks (-1: none).
    var userPrevious: Int32 = -1
    var userNext: Int32 = -1
    /// The streak's links in its conversation's ``TyperOrder``.
    var order = OrderLinks()
    /// The streak's place among its conversation's typers, when ``rankStamp`` is
    /// the engine's current render: set for the first typers a render lists.
    var rank: Int32 = 0
    /// The render that set ``rank`` (see ``Engine/renderStamp``).
    var rankStamp: UInt32 = 0
    /// Whether the typer is named, as of the streak's last placement among the
    /// typers (kept here so that rendering a typer's view reads no user record).
    var isNamed = false

    /// The (deadline, keystroke) key the streak times out at.
    var key: TimerQueue.Key { TimerQueue.Key(deadline: deadline, keystroke: keystroke) }

    /// What a free slab record holds.
    static let vacant = StreakRecord(
        conv: -1, user: -1, deadline: 0, keystroke: 0, alarm: TimerQueue.Key(deadline: 0, keystroke: 0),
        started: 0, pairHash: 0, convID: .none, userID: .none)
}

/// One member of a conversation, in the conversation's join-ordered member list.
struct MemberSlot {
    /// The user's id, inline: found without touching the user's record.
    var fingerprint: Identifier.Fingerprint
    /// The user, or ``MemberSlot/vacant`` for a slot freed by a leave.
    var user: Int32
    /// The member's live streak in this conversation, or -1.
    var streak: Int32
    /// The indicator last written to this member (they start from the empty one;
    /// under `--audience open`, a closed view holds the empty one). Whether the
    /// member's view is open is the conversation's ``ConversationRecord/openSlots``.
    var lastSent: IndicatorView

    /// The `user` of a freed slot.
    static let vacant: Int32 = -1

    /// True when the slot holds a member.
    var isOccupied: Bool { user != MemberSlot.vacant }

    /// A freed slot.
    static let free = MemberSlot(fingerprint: .none, user: vacant, streak: -1, lastSent: .empty)
}

extension Slab: OrderNodes where Record == StreakRecord {
    /// A streak's links in its conversation's typer order.
    subscript(links node: Int32) -> OrderLinks {
        get { self[node].order }
        set { self[node].order = newValue }
    }
}
