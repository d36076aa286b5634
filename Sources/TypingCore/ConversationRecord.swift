/// A live conversation: its members in join order and its typers in streak order.
struct ConversationRecord {
    /// The conversation's id.
    var id: Identifier
    /// Members in join order. Leaves leave vacant slots, compacted now and then.
    var members: [MemberSlot]
    /// Occupied slots in `members`.
    var memberCount: Int
    /// Active streaks, in the order they began.
    var typers: [Int32]
    /// The view of every member who is not typing (all typers), as last rendered.
    var fullView: IndicatorView

    /// A new, empty conversation.
    init(id: Identifier) {
        self.id = id
        self.members = []
        self.memberCount = 0
        self.typers = []
        self.fullView = .empty
    }

    /// True when a vacant slot is worth compacting away.
    var needsCompaction: Bool {
        let vacant = members.count - memberCount
        return vacant >= 8 && vacant * 2 > members.count
    }
}
