/// How many of a group have each length: the room's member ids, a location's typers'
/// names. ``longest`` is exact after any removal, so what it feeds
/// (``Engine/outputBound(of:)``) depends only on who is there now, never on who
/// left: a process rebuilt from a snapshot computes the same.
///
/// The distinct lengths, sorted, each with its count. Lengths are bounded (an id
/// takes at most 6 × 256 + 2 bytes in output), so adding or removing one costs at
/// most a move of that many entries, and usually of a few: ids and names in a room
/// come in few lengths.
package struct LengthTally: Equatable {
    /// The distinct lengths, ascending.
    private(set) var lengths: [Int32] = []
    /// How many have the length at the same place in ``lengths``.
    private(set) var counts: [Int32] = []

    /// An empty tally.
    package init() {}

    /// The largest length counted, 0 when none is.
    @inline(__always)
    package var longest: Int32 { lengths.last ?? 0 }

    /// True when nothing is counted.
    package var isEmpty: Bool { lengths.isEmpty }

    /// Counts one more of `length`.
    @inline(__always)
    package mutating func add(_ length: Int32) {
        if let last = lengths.last, last == length {
            counts[counts.count - 1] += 1
            return
        }
        let index = place(of: length)
        if index < lengths.count && lengths[index] == length {
            counts[index] += 1
        } else {
            lengths.insert(length, at: index)
            counts.insert(1, at: index)
        }
    }

    /// Counts one fewer of `length` (counted before).
    @inline(__always)
    package mutating func remove(_ length: Int32) {
        let index = place(of: length)
        guard index < lengths.count && lengths[index] == length else { return }
        if counts[index] > 1 {
            counts[index] -= 1
        } else if lengths.count == 1 {
            // The last one: the storage goes back.
            lengths = []
            counts = []
        } else {
            lengths.remove(at: index)
            counts.remove(at: index)
        }
    }

    /// The first place in ``lengths`` whose length is not below `length`.
    private func place(of length: Int32) -> Int {
        var low = 0, high = lengths.count
        while low < high {
            let middle = (low + high) / 2
            if lengths[middle] < length { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// How many are counted in all (for the invariant checker).
    package var total: Int { counts.reduce(0) { $0 + Int($1) } }

    /// A tally of `lengths` (for the invariant checker).
    package init<S: Sequence>(counting lengths: S) where S.Element == Int32 {
        for length in lengths { add(length) }
    }
}
