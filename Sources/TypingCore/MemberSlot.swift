/// One member of a conversation, in the conversation's join-ordered member list.
struct MemberSlot: Sendable {
    /// The user's id, inline: found without touching the user's record.
    var fingerprint: Identifier.Fingerprint
    /// The user, or ``MemberSlot/vacant`` for a slot freed by a leave.
    var user: Int32
    /// The member's active streak in this conversation, or -1.
    var streak: Int32
    /// The indicator last written to this member (they start from the empty one).
    var lastSent: IndicatorView

    /// The `user` of a freed slot.
    static let vacant: Int32 = -1

    /// True when the slot holds a member.
    var isOccupied: Bool { user != MemberSlot.vacant }

    /// A freed slot.
    static let free = MemberSlot(fingerprint: Identifier.Fingerprint(word0: 0, word1: 0, info: 0),
                                 user: vacant, streak: -1, lastSent: .empty)
}
