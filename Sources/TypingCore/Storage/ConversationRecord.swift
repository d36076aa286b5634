/// A live conversation: its members in join order, its open views, and its typers
/// in the order viewers see them, at its main timeline and in its threads.
package struct ConversationRecord {
    /// Above this many member slots, members are found through `memberIndex`
    /// instead of a scan.
    static let scanLimit = 32

    /// The conversation's id.
    var id: Identifier
    /// Members in join order. Leaves leave vacant slots, compacted now and then.
    package private(set) var members: [MemberSlot]
    /// Occupied slots in `members`.
    private(set) var memberCount: Int
    /// True once a render found the room above `--quiet-above` and sent every screen
    /// the empty indicator (Protocol.md#quiet-large-rooms): while it stays above,
    /// renders visit nothing; back at or below, the next render compares every
    /// screen.
    package var isHushed = false
    /// The main timeline's typers and views.
    package var main = LocationState()
    /// The threads in use (Protocol.md#threads); empty in a conversation that uses
    /// none.
    package var threads = ThreadTable()
    /// The slots of the members whose view is open, walked in join (slot) order.
    package private(set) var openSlots = SlotSet()
    /// The slots of members whose screen changed without a render (a `close` or an
    /// `offline` under `--audience members`): they hold the empty indicator, and the
    /// next render of the conversation, whatever causes it, compares them
    /// (Protocol.md#threads).
    /// Walked in join (slot) order; entering and leaving cost O(1) amortised.
    package private(set) var staleSlots = SlotSet()
    /// The bytes each member's id takes in output (escapes included, as the wider
    /// format writes them, quotes too), tallied: for ``Engine/outputBound(of:)``,
    /// which counts ids as long as the longest member's now.
    package private(set) var memberIDLengths = LengthTally()
    /// What each member with a side pane was last sent there, by slot
    /// (Protocol.md#side-panes): an entry for every member whose
    /// ``MemberSlot/side`` is set, and no other.
    package private(set) var sideSent: [Int32: IndicatorView] = [:]
    /// User → member slot, kept only for conversations past ``scanLimit`` slots.
    private var memberIndex: [UserIndex: Int32]?
    /// The members who see the main timeline's typers: those whose screen is at the
    /// main timeline, who receive typing (Protocol.md#not-seeing-others-type), and,
    /// under `--audience open`, whose view is open. A render of the main timeline
    /// visits these and nobody else, so members who receive nothing, and screens in
    /// threads, cost nothing per change there. (The stale members are among them.)
    private(set) var mainAudience = SlotSet()
    /// True under `--audience open`: only open views are in an audience.
    let openAudience: Bool

    /// A new, empty conversation; `openAudience`: under `--audience open`.
    init(id: Identifier, openAudience: Bool = false) {
        self.id = id
        self.members = []
        self.memberCount = 0
        self.openAudience = openAudience
    }

    /// The typers at `location` (read without copying the location's state).
    @inline(__always)
    func typers(at location: Location) -> TyperOrder {
        location == .main ? main.typers : threads.records[Int(location) - 1].state.typers
    }

    /// True when `location` keeps activity groups.
    @inline(__always)
    func hasGroups(at location: Location) -> Bool {
        location == .main ? main.groups != nil : threads.records[Int(location) - 1].state.groups != nil
    }

    /// The activity groups of `location`, if it keeps them.
    @inline(__always)
    func groups(at location: Location) -> ActivityGroups? {
        location == .main ? main.groups : threads.records[Int(location) - 1].state.groups
    }

    /// The shared view of `location`, and whether it was left stale.
    @inline(__always)
    func fullView(at location: Location) -> (view: IndicatorView, isStale: Bool) {
        location == .main
            ? (main.fullView, main.fullViewIsStale)
            : (
                threads.records[Int(location) - 1].state.fullView,
                threads.records[Int(location) - 1].state.fullViewIsStale
            )
    }

    /// The state of `location` (inlined: an accessor called out of line allocates
    /// its frame).
    @inline(__always)
    package subscript(location location: Location) -> LocationState {
        _read {
            if location == .main { yield main } else { yield threads[location].state }
        }
        _modify {
            if location == .main { yield &main } else { yield &threads[location].state }
        }
    }

    /// Changes the state of `location` through `body` (a closure, inlined: the
    /// subscript's accessor, called out of line, allocates its frame).
    @inline(__always)
    mutating func updateLocation<R>(_ location: Location, _ body: (inout LocationState) -> R) -> R {
        location == .main ? body(&main) : threads.updateState(location, body)
    }

    /// The slot of user `u`, if a member.
    @inline(__always)
    package func slot(of u: UserIndex) -> Int? {
        if let memberIndex { return memberIndex[u].map(Int.init) }
        for index in members.indices where members[index].user == u { return index }
        return nil
    }

    /// True when members are found through an index rather than a scan.
    @inline(__always) var isIndexed: Bool { memberIndex != nil }

    /// In a conversation that is not indexed: the slot of the member whose id is
    /// `id`, comparing inline fingerprints (`verify` checks long ids in full).
    @inline(__always)
    func scan(for id: Identifier, verify: (UserIndex) -> Bool) -> Int? {
        let fingerprint = id.fingerprint
        for index in members.indices where members[index].fingerprint == fingerprint {
            if fingerprint.isComplete || verify(members[index].user) { return index }
        }
        return nil
    }

    /// Sets the streak of the member in `slot`.
    @inline(__always)
    mutating func setStreak(_ streak: StreakIndex, at slot: Int) {
        members[slot].streak = streak
    }

    /// Records the indicator last sent to the member in `slot`.
    @inline(__always)
    package mutating func setLastSent(_ view: IndicatorView, at slot: Int) {
        members[slot].lastSent = view
    }

    /// The plain fields of member slot `slot`, read without copying the slot (which
    /// would retain its view).
    @inline(__always)
    func fields(of slot: Int) -> MemberSlot.Fields {
        members.withUnsafeBufferPointer { buffer in
            // Each field is loaded from the slot's address (the buffer's subscript
            // is an addressor): no copy of the slot.
            MemberSlot.Fields(
                fingerprint: buffer[slot].fingerprint, user: buffer[slot].user,
                streak: buffer[slot].streak, location: buffer[slot].location,
                table: buffer[slot].table, isList: buffer[slot].isList,
                receives: buffer[slot].receives)
        }
    }

    /// The indicator last sent to the member in `slot` (read without copying the slot).
    @inline(__always)
    func lastSent(of slot: Int) -> IndicatorView {
        members.withUnsafeBufferPointer { $0[slot].lastSent }
    }

    /// True when `slot` holds a member who receives typing.
    @inline(__always)
    func receives(_ slot: Int) -> Bool {
        members.withUnsafeBufferPointer { $0[slot].user != MemberSlot.vacant && $0[slot].receives }
    }

    /// The member slot `slot`, to change what is not kept in step with other
    /// structures (the screen's kind, the table, the receive flag).
    @inline(__always)
    subscript(member slot: Int) -> MemberSlot {
        _read { yield members[slot] }
        _modify { yield &members[slot] }
    }

    /// Moves the member in `slot` to `location`, keeping the audiences in step.
    /// A thread left with nothing is kept until the caller releases it (a render
    /// of it may be on its way).
    mutating func move(_ slot: Int, to location: Location) {
        let old = members[slot].location
        guard old != location else { return }
        if old != .main { leaveThread(slot, at: old) }
        members[slot].location = location
        if location != .main { enterThread(slot, at: location) }
        updateAudience(slot)
    }

    /// Sets the side pane of the member in `slot` to thread `location` (or removes
    /// it, -1), keeping the threads' side viewers in step; the pane starts from the
    /// empty indicator. The thread it left is kept until the caller releases it.
    mutating func setSide(_ slot: Int, to location: Location) {
        let old = members[slot].side
        guard old != location else { return }
        if old > .main {
            if members[slot].receives { threads[old].sideViewers.remove(slot) } else { threads[old].sideSilent -= 1 }
        }
        members[slot].side = location
        if location > .main {
            if members[slot].receives {
                threads[location].sideViewers.insert(slot)
            } else {
                threads[location].sideSilent += 1
            }
            sideSent[Int32(slot)] = .empty
        } else {
            sideSent[Int32(slot)] = nil
            if sideSent.isEmpty { sideSent = [:] }
        }
    }

    /// What the side pane of the member in `slot` was last sent (the empty
    /// indicator when they have none).
    @inline(__always)
    func sideLastSent(of slot: Int) -> IndicatorView {
        sideSent[Int32(slot)] ?? .empty
    }

    /// Records the indicator last sent to the side pane of the member in `slot`.
    @inline(__always)
    mutating func setSideLastSent(_ view: IndicatorView, at slot: Int) {
        sideSent[Int32(slot)] = view
    }

    /// Counts the member in `slot` among those at thread `location`: a viewer
    /// there when they receive typing, else one who only keeps the thread in use.
    private mutating func enterThread(_ slot: Int, at location: Location) {
        if members[slot].receives {
            threads[location].viewers.insert(slot)
        } else {
            threads[location].silent += 1
        }
    }

    /// Takes the member in `slot` out of those at thread `location`.
    private mutating func leaveThread(_ slot: Int, at location: Location) {
        if members[slot].receives {
            threads[location].viewers.remove(slot)
        } else {
            threads[location].silent -= 1
        }
    }

    /// True when the member in `slot` belongs in ``mainAudience``.
    @inline(__always)
    func seesMain(_ slot: Int) -> Bool {
        // Read in place (the buffer's subscript is an addressor): no copy of the
        // slot, which would retain its view.
        let sees = members.withUnsafeBufferPointer { buffer in
            buffer[slot].user != MemberSlot.vacant && buffer[slot].location == .main && buffer[slot].receives
        }
        return sees && (!openAudience || isOpen(slot))
    }

    /// Puts the member in `slot` in ``mainAudience``, or takes them out, as
    /// ``seesMain(_:)`` says. O(log slots).
    @inline(__always)
    mutating func updateAudience(_ slot: Int) {
        if seesMain(slot) { mainAudience.insert(slot) } else { mainAudience.remove(slot) }
    }

    /// Sets whether the member in `slot` receives typing
    /// (Protocol.md#not-seeing-others-type), keeping the audiences in step.
    mutating func setReceives(_ receives: Bool, at slot: Int) {
        guard members[slot].receives != receives else { return }
        let location = members[slot].location
        if location != .main { leaveThread(slot, at: location) }
        let side = members[slot].side
        if side > .main { setSide(slot, to: -1) }
        members[slot].receives = receives
        if location != .main { enterThread(slot, at: location) }
        // The side pane stays set, and is compared from the empty indicator.
        if side > .main { setSide(slot, to: side) }
        updateAudience(slot)
    }

    /// Marks the member in `slot` as compared at the next render (their screen
    /// changed without one).
    mutating func markStale(_ slot: Int) {
        staleSlots.insert(slot)
    }

    /// Forgets the stale members: a render compared them.
    mutating func clearStale() {
        if !staleSlots.isEmpty { staleSlots.removeAll() }
    }

    /// True when the member in `slot` waits to be compared.
    func isStale(_ slot: Int) -> Bool {
        staleSlots.contains(slot)
    }

    #if TYPINGD_INTERNAL_CHECKS
    /// What entering and leaving the member sets (audience, open views, screens
    /// waiting to be told, threads' viewers) cost so far, in words and entries
    /// touched: for tests that count the work per step, not its time.
    package var slotSetWork: Int {
        var work = mainAudience.work + openSlots.work + staleSlots.work
        threads.forEachLocation { work += threads[$0].viewers.work + threads[$0].sideViewers.work }
        return work
    }
    #endif

    /// True when the view of the member in `slot` is open.
    func isOpen(_ slot: Int) -> Bool {
        openSlots.contains(slot)
    }

    /// Opens the view of the member in `slot` (closed): O(1) amortised.
    mutating func openView(at slot: Int) {
        openSlots.insert(slot)
        if openAudience { updateAudience(slot) }
    }

    /// Closes the view of the member in `slot` (open): O(1) amortised.
    mutating func closeView(at slot: Int) {
        openSlots.remove(slot)
        if openAudience { updateAudience(slot) }
    }

    /// Adds user `u`, whose id is `id`, at the end of the join order, with their
    /// `receive_typing`; returns their slot.
    mutating func append(_ u: UserIndex, id: Identifier, link: MembershipIndex, receives: Bool) -> Int {
        let slot = members.count
        members.append(
            MemberSlot(
                fingerprint: id.fingerprint, user: u, streak: .none, lastSent: .empty, link: link,
                receives: receives))
        if receives && !openAudience { mainAudience.insert(slot) }
        memberCount += 1
        memberIDLengths.add(Int32(id.encodedBound))
        if memberIndex != nil {
            memberIndex?[u] = Int32(slot)
        } else if members.count > ConversationRecord.scanLimit {
            rebuildIndex()
        }
        return slot
    }

    /// The most bytes a member's id takes in output, among the members now.
    @inline(__always)
    var longestMemberID: Int32 { memberIDLengths.longest }

    /// Frees `slot` (its member, whose id is `id`, leaves; their view is closed
    /// already, and they are back at the main timeline), compacting vacant slots
    /// when they are many.
    mutating func vacate(_ slot: Int, id: Identifier) {
        memberIDLengths.remove(Int32(id.encodedBound))
        setSide(slot, to: -1)
        memberIndex?[members[slot].user] = nil
        staleSlots.remove(slot)
        mainAudience.remove(slot)
        members[slot] = .free
        memberCount -= 1
        let vacant = members.count - memberCount
        if memberCount == 0 {
            members = []
            memberIndex = nil
            mainAudience.removeAll()
            memberIDLengths = LengthTally()
        } else if vacant >= 8 && vacant * 2 > members.count {
            // Open slots move with their members: a member's new slot is the
            // number of members before it.
            var newSlot = [Int32](repeating: -1, count: members.count), kept: Int32 = 0
            for (old, member) in members.enumerated() where member.isOccupied {
                newSlot[old] = kept
                kept += 1
            }
            openSlots = SlotSet(openSlots.elements.map { Int(newSlot[$0]) })
            staleSlots = SlotSet(staleSlots.elements.map { Int(newSlot[$0]) })
            if !sideSent.isEmpty {
                sideSent = Dictionary(uniqueKeysWithValues: sideSent.map { (newSlot[Int($0.key)], $0.value) })
            }
            threads.remapViewers(newSlot)
            members = members.filter(\.isOccupied)
            rebuildIndex()
            mainAudience.removeAll()
            for slot in members.indices { updateAudience(slot) }
        }
    }

    /// Builds (or drops, for a small conversation) the user → slot index.
    private mutating func rebuildIndex() {
        guard members.count > ConversationRecord.scanLimit / 2 else {
            memberIndex = nil
            return
        }
        var index: [UserIndex: Int32] = [:]
        index.reserveCapacity(members.count)
        for (slot, member) in members.enumerated() where member.isOccupied {
            index[member.user] = Int32(slot)
        }
        memberIndex = index
    }
}
