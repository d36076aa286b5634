import HeapModule

/// One screen of a membership: its main screen or its side pane
/// (Protocol.md#side-panes), named by conversation and user so that it keeps its
/// name while member slots are compacted.
package struct ScreenKey: Hashable {
    var conv: ConversationIndex
    var user: UserIndex
    var side: Bool
}

/// The announcements for screen readers (Protocol.md#announcements-for-screen-readers):
/// for each screen, the pending announcement (when it fires) and the text it last
/// announced. Only screens that have either are kept; without
/// `--announce-after-ms`, nothing is.
///
/// Pending announcements are a min-heap of (due, sequence) entries, one pushed per
/// indicator written with text; a screen's entry is the one whose sequence its
/// ``pending`` holds, and the others (replaced or cancelled) are dropped when they
/// reach the top, or all at once when they outnumber the live ones. Sequence numbers
/// order announcements due at the same time by when their indicators were written.
package struct Announcements {
    /// When a screen's pending announcement fires, and its sequence number.
    struct Pending: Equatable {
        var due: Int
        var sequence: UInt64
    }

    /// An entry of the heap.
    struct Entry: Comparable {
        var due: Int
        var sequence: UInt64
        var screen: ScreenKey

        static func < (lhs: Entry, rhs: Entry) -> Bool { (lhs.due, lhs.sequence) < (rhs.due, rhs.sequence) }
        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.due == rhs.due && lhs.sequence == rhs.sequence }
    }

    /// The pending announcement of each screen that has one.
    private(set) var pending: [ScreenKey: Pending] = [:]
    /// What each screen last announced, for screens that announced something since
    /// they were last forgotten or sent the empty indicator.
    private(set) var announced: [ScreenKey: String] = [:]
    /// Screens a hand-sent `restore` left with nothing pending, until their next
    /// indicator: one of them may show a sentence it will not announce, having
    /// announced nothing (a snapshot says `"announced":""` for it) or another text
    /// (the snapshot says that text) (for the invariant checker).
    private(set) var muted: Set<ScreenKey> = []
    private var heap = Heap<Entry>()
    private var sequence: UInt64 = 0

    /// Screens with a pending announcement.
    package var pendingCount: Int { pending.count }

    /// Schedules the announcement of `screen` at `due`, replacing any earlier one:
    /// an indicator with text was written to it.
    mutating func schedule(_ screen: ScreenKey, at due: Int) {
        sequence += 1
        if !muted.isEmpty { muted.remove(screen) }
        pending[screen] = Pending(due: due, sequence: sequence)
        heap.insert(Entry(due: due, sequence: sequence, screen: screen))
        if heap.count > 2 * pending.count + 1024 {
            // Replaced entries outnumber the live ones: keep the live ones only.
            heap = Heap(pending.map { Entry(due: $0.value.due, sequence: $0.value.sequence, screen: $0.key) })
        }
    }

    /// The empty indicator was written to `screen`: its pending announcement is
    /// cancelled, and it last announced nothing.
    mutating func clear(_ screen: ScreenKey) {
        if !muted.isEmpty { muted.remove(screen) }
        let hadPending = pending.removeValue(forKey: screen) != nil
        let hadAnnounced = announced.removeValue(forKey: screen) != nil
        if hadPending || hadAnnounced { shrinkIfEmpty() }
    }

    /// `screen` was forgotten (or is gone): it loses its pending announcement and
    /// what it last announced.
    mutating func forget(_ screen: ScreenKey) {
        clear(screen)
    }

    /// Records that `screen` announced `text`.
    mutating func setAnnounced(_ text: String, for screen: ScreenKey) {
        announced[screen] = text
    }

    /// Sets the state of `screen` as a snapshot gave it (`restore`): its pending
    /// announcement fires at `due` (none when nil), after every one already pending
    /// at that time, and it last announced `text` ("" when nothing).
    mutating func restore(_ screen: ScreenKey, due: Int?, announced text: String) {
        // Without `due`, whatever `text` is: a screen that shows one sentence and
        // last announced another does not announce the one it shows either.
        if due == nil { muted.insert(screen) } else { muted.remove(screen) }
        if let due {
            schedule(screen, at: due)
        } else {
            pending[screen] = nil
        }
        announced[screen] = text.isEmpty ? nil : text
        shrinkIfEmpty()
    }

    /// The pending announcements, each with its rank (from 1) in the order they
    /// fire: by time, then by sequence (for a snapshot). O(pending × log pending).
    func ranked() -> [ScreenKey: (due: Int, rank: Int)] {
        var ranks: [ScreenKey: (due: Int, rank: Int)] = [:]
        ranks.reserveCapacity(pending.count)
        let order = pending.sorted { ($0.value.due, $0.value.sequence) < ($1.value.due, $1.value.sequence) }
        for (index, entry) in order.enumerated() { ranks[entry.key] = (entry.value.due, index + 1) }
        return ranks
    }

    /// What `screen` last announced ("" when nothing).
    func lastAnnounced(_ screen: ScreenKey) -> String {
        announced[screen] ?? ""
    }

    /// When the earliest pending announcement fires, if any (dropping replaced
    /// entries from the top).
    mutating func nextDue() -> Int? {
        while let top = heap.min {
            if pending[top.screen]?.sequence == top.sequence { return top.due }
            _ = heap.removeMin()
        }
        return nil
    }

    /// Takes the earliest pending announcement, if it is due at or before `time`.
    mutating func takeDue(through time: Int) -> (screen: ScreenKey, due: Int)? {
        guard let due = nextDue(), due <= time else { return nil }
        let top = heap.removeMin()
        pending[top.screen] = nil
        return (top.screen, due)
    }

    /// Gives the storage back once nothing is kept.
    private mutating func shrinkIfEmpty() {
        // With nothing pending, every entry left in the heap is a replaced one.
        if pending.isEmpty && !heap.isEmpty { heap = Heap() }
    }

    /// Every screen with a pending announcement or a last announced text (for the
    /// invariant checker).
    var screens: Set<ScreenKey> { Set(pending.keys).union(announced.keys).union(muted) }
}
