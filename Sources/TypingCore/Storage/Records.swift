/// What the engine knows about a user while they are a member somewhere.
package struct UserRecord {
    /// The user's id.
    var id: Identifier
    /// The display name shown in phrases (``DisplayName/unknown`` when unnamed).
    var displayName: String
    /// False while the user has no display name of their own
    /// (Protocol.md#display-names).
    var isNamed = false
    /// Whether others see this user type (`send_typing`).
    var sendsTyping = true
    /// Whether this user receives indicators (`receive_typing`,
    /// Protocol.md#not-seeing-others-type); each of their member slots holds a copy.
    var receivesTyping = true
    /// The user's memberships, a circular list linked through the engine's
    /// ``Engine/memberships`` in the order they were joined (`none`: none; the record
    /// goes with the last one).
    var memberships = MembershipIndex.none
    /// The user's live streaks, a list linked through ``StreakRecord/userNext`` in the
    /// order they began (so stopping one is O(1), wherever it is in the list).
    var streaks = StreakList()

    // The record fits one 64-byte cache line: it is read on every streak start and
    // stop. What only views and languages need is kept beside it: a user's open
    // views in ``Engine/openViews``, their locale in ``Engine/locales``.

    /// The most bytes the display name takes inside a JSON string or as text.
    var nameBound: Int { UserRecord.nameBound(of: displayName) }

    /// How many times its bytes a display name can take in output. Display names
    /// hold no control character; JSON at most doubles a byte (`"`, `\`, U+2028,
    /// U+2029 as `\u2028`); text writes a bidirectional control as `\u{…}`: U+061C
    /// (2 bytes) as 7, U+2028 or U+200E (3 bytes) as 8.
    static let nameEscapeFactor = 4

    /// The most bytes `displayName` takes in output (see ``nameBound``).
    static func nameBound(of displayName: String) -> Int { displayName.utf8.count * nameEscapeFactor }

    /// A user with no name yet and no memberships.
    init(id: Identifier) {
        self.id = id
        self.displayName = DisplayName.unknown
    }
}

/// The ends of a doubly linked list of streaks (`none`: none).
struct StreakList: Equatable {
    var first = StreakIndex.none
    var last = StreakIndex.none
}

/// One membership in its user's list of memberships (``UserRecord/memberships``):
/// a circular doubly linked list in join order, so that a change of language visits
/// the user's conversations in that order, and a leave unlinks in O(1).
package struct MembershipLink {
    /// The conversation.
    var conv: ConversationIndex
    var previous: MembershipIndex
    var next: MembershipIndex

    static let vacant = MembershipLink(conv: .none, previous: .none, next: .none)
}

/// A typing streak: from the first keystroke until it stops.
package struct StreakRecord {
    /// The conversation typed in.
    var conv: ConversationIndex
    /// The typer.
    var user: UserIndex
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
    package var pairHash: UInt64
    /// The conversation's id, inline (complete for ids of up to 16 bytes).
    var convID: Identifier.Fingerprint
    /// The typer's id, inline.
    var userID: Identifier.Fingerprint
    /// The neighbours in the user's list of streaks (`none`: none).
    var userPrevious = StreakIndex.none
    var userNext = StreakIndex.none
    /// The streak's links in its location's ``TyperOrder``.
    var order = OrderLinks()
    /// The streak's links in its activity's tree, while its location keeps
    /// ``LocationState/groups``.
    var groupOrder = OrderLinks()
    /// The streak's place among its location's typers, when ``rankStamp`` is
    /// the engine's current render: set for the first typers a render lists.
    var rank: Int32 = 0
    /// Where the streak's keystrokes are: the main timeline or a thread
    /// (Protocol.md#threads).
    var location: Location = .main
    /// What the typer is doing (Protocol.md#activities-recording-sending-sharing).
    var activity: Activity = .typing
    /// Whether the typer is named, as of the streak's last placement among the
    /// typers (kept here so that rendering a typer's view reads no user record).
    var isNamed = false

    /// The (deadline, keystroke) key the streak times out at.
    var key: TimerQueue.Key { TimerQueue.Key(deadline: deadline, keystroke: keystroke) }

    /// What a free slab record holds.
    static let vacant = StreakRecord(
        conv: .none, user: .none, deadline: 0, keystroke: 0, alarm: TimerQueue.Key(deadline: 0, keystroke: 0),
        started: 0, pairHash: 0, convID: .none, userID: .none)
}

/// One member of a conversation, in the conversation's join-ordered member list.
package struct MemberSlot {
    /// The user's id, inline: found without touching the user's record.
    var fingerprint: Identifier.Fingerprint
    /// The user, or ``MemberSlot/vacant`` for a slot freed by a leave.
    var user: UserIndex
    /// The member's live streak in this conversation (at any location), or none.
    package var streak: StreakIndex
    /// The indicator last written to this member (they start from the empty one;
    /// a closed view under `--audience open`, a new screen and a member who does not
    /// receive typing hold the empty one). Whether the member's view is open is the
    /// conversation's ``ConversationRecord/openSlots``.
    package var lastSent: IndicatorView
    /// The member's entry in their user's list of memberships.
    var link: MembershipIndex
    /// Where the member's screen is: the main timeline, or the thread their view
    /// shows (Protocol.md#threads).
    var location: Location = .main
    /// The member's phrase table (a copy of their user's, resolved from their locale).
    var table: UInt16 = 0
    /// True when the member's view is open as a row of their chat list
    /// (Protocol.md#the-chat-list).
    var isList = false
    /// A copy of the user's `receive_typing` (Protocol.md#not-seeing-others-type).
    var receives = true
    /// The thread the member's side pane shows, or -1 when they have none
    /// (Protocol.md#side-panes). What it was last sent is the conversation's
    /// ``ConversationRecord/sideSent``.
    var side: Location = -1

    /// The `user` of a freed slot.
    static var vacant: UserIndex { .none }

    /// What a render reads of a slot, but its view.
    struct Fields {
        var fingerprint: Identifier.Fingerprint
        var user: UserIndex
        var streak: StreakIndex
        var location: Location
        var table: UInt16
        var isList: Bool
        var receives: Bool
    }

    /// True when the slot holds a member.
    var isOccupied: Bool { user != MemberSlot.vacant }

    /// A freed slot.
    static let free = MemberSlot(fingerprint: .none, user: vacant, streak: .none, lastSent: .empty, link: .none)
}

extension Slab: OrderNodes where Record == StreakRecord, Index == StreakIndex {
    /// A streak's links in the tree `tree` names.
    @inline(__always)
    package subscript(links node: StreakIndex, tree tree: OrderTree) -> OrderLinks {
        get { tree == .location ? self[node].order : self[node].groupOrder }
        set {
            if tree == .location { self[node].order = newValue } else { self[node].groupOrder = newValue }
        }
    }
}
