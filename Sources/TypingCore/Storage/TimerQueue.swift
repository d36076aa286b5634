import HeapModule

/// The pending timeouts: a min-heap of alarms, one per live streak.
///
/// Keystrokes are the most common command, and most of them only move a deadline
/// later; they cost no heap work. Each streak remembers the key of its one alarm
/// in the heap (``StreakRecord/alarm``), which is never later than its real
/// (deadline, keystroke) key: when an alarm comes due before the real deadline, it
/// is pushed again with the real key; a keystroke that moves the deadline *earlier*
/// pushes a new alarm at once. Entries whose key is not their streak's alarm any
/// more (the streak stopped, or a newer alarm replaced them) are dropped when they
/// reach the top, and the heap is rebuilt from the live streaks when such entries
/// outnumber the live ones, so a clock that stands still cannot make it grow.
///
/// Keystroke numbers are unique, so an entry is its streak's alarm exactly when
/// their keystroke numbers match: no generation counter is needed.
package struct TimerQueue {
    /// When an alarm comes due: equal deadlines fire in keystroke order.
    package struct Key: Comparable, Equatable {
        /// The deadline, in milliseconds.
        var deadline: Int
        /// The global number of the keystroke that set it.
        var keystroke: UInt64

        package static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.deadline, lhs.keystroke) < (rhs.deadline, rhs.keystroke)
        }
    }

    /// One alarm: a key and the streak it belongs to.
    package struct Entry: Comparable {
        var key: Key
        var streak: StreakIndex

        package static func < (lhs: Entry, rhs: Entry) -> Bool { lhs.key < rhs.key }
        package static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.key == rhs.key }
    }

    package private(set) var heap = Heap<Entry>()
    /// The most entries held since the storage was last rebuilt.
    private(set) var highWater = 0

    /// The entries in the heap, live or not.
    package var count: Int { heap.count }

    /// The earliest entry.
    var min: Entry? { heap.min }

    /// Adds an entry.
    mutating func insert(_ entry: Entry) {
        heap.insert(entry)
        highWater = Swift.max(highWater, heap.count)
    }

    /// Removes the earliest entry.
    mutating func removeMin() {
        _ = heap.removeMin()
        if highWater > 4096 && heap.count * 4 < highWater { rebuild(Array(heap.unordered)) }
    }

    /// True when stale entries outnumber the `live` ones enough to rebuild.
    func needsCompaction(live: Int) -> Bool {
        heap.count > 2 * live + 1024
    }

    /// Replaces the heap by `entries`, in storage of their size (the old storage,
    /// however large it grew, is freed).
    package mutating func rebuild(_ entries: [Entry]) {
        heap = Heap(entries.withUnsafeBufferPointer { Array($0) })
        highWater = heap.count
    }
}
