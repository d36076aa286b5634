/// Where a conversation's typers and viewers are (protocol v3 §C): its main timeline
/// (location 0) or one of its threads (1, 2, …: a thread's slot in the
/// conversation's ``ThreadTable``, plus 1).
typealias Location = Int32

extension Location {
    /// The main timeline.
    static let main: Location = 0
}

/// The typers at one location of a conversation, in the order viewers see them, and
/// the views last built from them.
struct LocationState {
    /// Live streaks at this location, in the order viewers see them: the named
    /// typers' first (the first `typers.namedCount`), each group in the configured
    /// order.
    var typers = TyperOrder()
    /// The same streaks by activity, kept only while some typer here does something
    /// else than type (nil: everyone types, and ``typers`` is the one group).
    var groups: ActivityGroups?
    /// The view of every viewer here who is not typing here, in the default table
    /// and `--style` (variant 0), as last rendered.
    var fullView: IndicatorView = .empty
    /// The views of the other variants (tables and styles) viewers here needed, as
    /// last built (see ``Engine/variantView(_:in:)``).
    var variants: [VariantView] = []
    /// Counts the rebuilds of ``fullView``: a variant built at an older one is out
    /// of date.
    var epoch: UInt32 = 0
    /// True when ``fullView`` was not rebuilt after the typers changed, because
    /// nobody was in the audience to see it.
    var fullViewIsStale = false
    /// The most bytes a typer's display name takes in JSON output, since the
    /// location was last quiet: for ``Engine/outputBound(of:)``.
    var longestTyperName: Int32 = 0

    /// True when nobody types here.
    var isQuiet: Bool { typers.isEmpty }
}

/// One other variant of a location's shared view: the same typers, phrased in
/// another table or style.
struct VariantView {
    /// ``Engine/variant(table:list:)``.
    var key: UInt32
    /// The view: derived from the location's ``LocationState/fullView`` at
    /// ``epoch`` (or an older one with the same content).
    var view: IndicatorView
    /// The ``LocationState/epoch`` it was built at.
    var epoch: UInt32
}

/// A location's typers by activity, one order-statistic tree each: clauses need
/// each activity's count, named count and first names, in O(log typers).
struct ActivityGroups {
    /// One tree per ``Activity``, linked through ``StreakRecord/groupOrder``.
    var trees = [TyperOrder](repeating: TyperOrder(), count: Activity.allCases.count)
}

/// A thread of a conversation: its typers, and the members whose screen shows it.
struct ThreadRecord {
    /// The thread's id.
    var id: Identifier
    /// Its typers and views.
    var state = LocationState()
    /// The member slots whose location is this thread, in join (slot) order.
    var viewers: [Int32] = []

    /// True when the thread holds nothing worth keeping.
    var isUnused: Bool { state.isQuiet && viewers.isEmpty }
}

/// The threads a conversation has in use: those with a typer or a viewer. Others
/// are forgotten; a thread needs no creating.
struct ThreadTable {
    /// Threads by slot; a freed slot holds an empty id and is reused.
    private(set) var records: [ThreadRecord] = []
    private var free: [Int32] = []
    /// Thread id → slot.
    private var index: [Identifier: Int32] = [:]

    /// Threads in use.
    var count: Int { index.count }

    /// True when `location` is a thread in use.
    func contains(_ location: Location) -> Bool {
        let slot = Int(location) - 1
        return slot >= 0 && slot < records.count && records[slot].id.byteCount > 0
    }

    /// The location of thread `id`, if in use.
    func location(of id: Identifier) -> Location? {
        index[id].map { $0 + 1 }
    }

    /// The location of thread `id`, taking a slot for it if it is not in use.
    mutating func locate(_ id: Identifier) -> Location {
        if let slot = index[id] { return slot + 1 }
        // A free slot may be stale (past the end, or in use again): release does not
        // search the list for them, each is dropped here, once.
        var slot = Int32(-1)
        while let reused = free.popLast() {
            if Int(reused) < records.count && records[Int(reused)].id.byteCount == 0 {
                slot = reused
                records[Int(slot)] = ThreadRecord(id: id)
                break
            }
        }
        if slot < 0 {
            slot = Int32(records.count)
            records.append(ThreadRecord(id: id))
        }
        index[id] = slot
        return slot + 1
    }

    /// The thread at `location` (1 or more).
    @inline(__always)
    subscript(location: Location) -> ThreadRecord {
        _read { yield records[Int(location) - 1] }
        _modify { yield &records[Int(location) - 1] }
    }

    /// Changes the state of the thread at `location` (1 or more) through `body`.
    @inline(__always)
    mutating func updateState<R>(_ location: Location, _ body: (inout LocationState) -> R) -> R {
        body(&records[Int(location) - 1].state)
    }

    /// Forgets the thread at `location` when it holds nothing; true when it did.
    @discardableResult
    mutating func release(_ location: Location) -> Bool {
        let slot = Int(location) - 1
        guard slot >= 0, slot < records.count, records[slot].id.byteCount > 0, records[slot].isUnused else { return false }
        index[records[slot].id] = nil
        records[slot] = ThreadRecord(id: Identifier(""))
        if slot == records.count - 1 {
            records.removeLast()
            while let last = records.last, last.id.byteCount == 0 { records.removeLast() }
            // The free slots past the new end stay listed until locate drops them:
            // removing them here would cost O(free slots) per release.
        } else {
            free.append(Int32(slot))
        }
        if records.isEmpty {
            records = []
            free = []
            index = [:]
        }
        return true
    }

    /// Calls `body` with the location of each thread in use.
    func forEachLocation(_ body: (Location) -> Void) {
        for (slot, record) in records.enumerated() where record.id.byteCount > 0 { body(Location(slot + 1)) }
    }

    /// The slots of every thread's viewers after members moved (slot compaction).
    mutating func remapViewers(_ newSlot: [Int32]) {
        for slot in records.indices where records[slot].id.byteCount > 0 {
            records[slot].viewers = records[slot].viewers.map { newSlot[Int($0)] }
        }
    }
}
