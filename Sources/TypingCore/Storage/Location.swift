/// Where a conversation's typers and viewers are (Protocol.md#threads): its main
/// timeline (location 0) or one of its threads (1, 2, …: a thread's slot in the
/// conversation's ``ThreadTable``, plus 1).
package typealias Location = Int32

extension Location {
    /// The main timeline.
    package static let main: Location = 0
}

/// The typers at one location of a conversation, in the order viewers see them, and
/// the views last built from them.
package struct LocationState {
    /// Live streaks at this location, in the order viewers see them: the named
    /// typers' first (the first `typers.namedCount`), each group in the configured
    /// order.
    package var typers = TyperOrder()
    /// The same streaks by activity, kept only while some typer here does something
    /// else than type (nil: everyone types, and ``typers`` is the one group).
    package var groups: ActivityGroups?
    /// The view of every viewer here who is not typing here, in the default table
    /// and `--style` (variant 0), as last rendered.
    package var fullView: IndicatorView = .empty
    /// The views of the other variants (tables and styles) viewers here needed
    /// since the location was last quiet, as last built (see
    /// ``Engine/variantView(_:of:frame:)``).
    package var variants = VariantViews()
    /// Counts the rebuilds of ``fullView``: a variant built at an older one is out
    /// of date.
    var epoch: UInt32 = 0
    /// True when ``fullView`` was not rebuilt after the typers changed, because
    /// nobody was in the audience to see it.
    package var fullViewIsStale = false
    /// The most bytes each typer's display name here takes in output, tallied: for
    /// ``Engine/outputBound(of:)``, which counts names as long as the longest typer's
    /// now.
    package var typerNameLengths = LengthTally()

    /// True when nobody types here.
    var isQuiet: Bool { typers.isEmpty }
}

/// One other variant of a location's shared view: the same typers, phrased in
/// another table or style.
package struct VariantView {
    /// ``Engine/variant(table:list:)``.
    package var key: UInt32
    /// The view: derived from the location's ``LocationState/fullView`` at
    /// ``epoch`` (or an older one with the same content).
    var view: IndicatorView
    /// The ``LocationState/epoch`` it was built at.
    var epoch: UInt32
}

/// The variants of a location's shared view, found by key in O(1) however many
/// languages its viewers read: a short list is searched, a long one (past
/// ``linearLimit``) also keeps an index that grows with it.
package struct VariantViews {
    /// The variants, in the order they were first built.
    package private(set) var entries: [VariantView] = []
    /// Key → place in ``entries``, once there are more than ``linearLimit``.
    private var index: [UInt32: Int]?

    /// Up to this many variants, a linear search is the fastest lookup.
    static let linearLimit = 16

    /// How many variants are kept.
    package var count: Int { entries.count }

    /// How many entries finding one reads: at most ``linearLimit``, then 1.
    var entriesReadPerLookup: Int { index == nil ? entries.count : 1 }

    /// The variant for `key`, if kept.
    @inline(__always)
    func find(_ key: UInt32) -> VariantView? {
        if let index { return index[key].map { entries[$0] } }
        for entry in entries where entry.key == key { return entry }
        return nil
    }

    /// Stores `entry`, replacing the one for its key.
    mutating func store(_ entry: VariantView) {
        if let index {
            if let at = index[entry.key] {
                entries[at] = entry
            } else {
                self.index?[entry.key] = entries.count
                entries.append(entry)
            }
            return
        }
        if let at = entries.firstIndex(where: { $0.key == entry.key }) {
            entries[at] = entry
            return
        }
        entries.append(entry)
        if entries.count > VariantViews.linearLimit {
            var built: [UInt32: Int] = [:]
            for (at, stored) in entries.enumerated() { built[stored.key] = at }
            index = built
        }
    }

    /// Forgets every variant (the location is quiet: every view of it is empty),
    /// giving the storage back.
    mutating func removeAll() {
        if !entries.isEmpty || index != nil {
            entries = []
            index = nil
        }
    }
}

/// A location's typers by activity, one order-statistic tree each: clauses need
/// each activity's count, named count and first names, in O(log typers).
package struct ActivityGroups {
    /// One tree per ``Activity``, linked through ``StreakRecord/groupOrder``.
    var trees = [TyperOrder](repeating: TyperOrder(), count: Activity.allCases.count)
}

/// A thread of a conversation: its typers, and the members whose screen shows it.
struct ThreadRecord {
    /// The thread's id.
    var id: Identifier
    /// Its typers and views.
    var state = LocationState()
    /// The member slots whose screen shows this thread and who receive typing (its
    /// audience: a screen at a thread is an open view), walked in join (slot)
    /// order; entering and leaving cost O(1) amortised, whatever the order.
    var viewers = SlotSet()
    /// Members whose screen shows this thread but who receive no typing
    /// (Protocol.md#not-seeing-others-type): they keep the thread in use, and no
    /// render visits them.
    var silent: Int32 = 0
    /// The member slots whose side pane shows this thread and who receive typing
    /// (Protocol.md#side-panes), walked in join (slot) order.
    var sideViewers = SlotSet()
    /// Side panes that show this thread for members who receive no typing.
    var sideSilent: Int32 = 0

    /// True when the thread holds nothing worth keeping.
    var isUnused: Bool { state.isQuiet && viewers.isEmpty && silent == 0 && sideViewers.isEmpty && sideSilent == 0 }
}

/// The threads a conversation has in use: those with a typer or a viewer. Others
/// are forgotten; a thread needs no creating.
package struct ThreadTable {
    /// Threads by slot; a freed slot holds an empty id and is reused.
    private(set) var records: [ThreadRecord] = []
    private var free: [Int32] = []
    /// Thread id → slot.
    private var index: [Identifier: Int32] = [:]

    /// Threads in use.
    package var count: Int { index.count }

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
        guard slot >= 0, slot < records.count, records[slot].id.byteCount > 0, records[slot].isUnused else {
            return false
        }
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
            records[slot].viewers = SlotSet(records[slot].viewers.elements.map { Int(newSlot[$0]) })
            if !records[slot].sideViewers.isEmpty {
                records[slot].sideViewers = SlotSet(records[slot].sideViewers.elements.map { Int(newSlot[$0]) })
            }
        }
    }
}
