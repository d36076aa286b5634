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
    // Each entry packs a length (the high 32 bits) and how many have it (the low 32,
    // never 0), so entries sort by length. Most groups have one or two distinct
    // lengths: those stay inline, `low` then `high` (0: none), with no storage to
    // allocate per room or per burst of typing; a third moves them all to `spill`,
    // ascending, until at most one is left. What a join costs (bench/RESULTS.md).
    private var low: UInt64 = 0
    private var high: UInt64 = 0
    private var spill: [UInt64] = []

    private static let countMask: UInt64 = 0xFFFF_FFFF

    /// An empty tally.
    package init() {}

    /// The largest length counted, 0 when none is.
    @inline(__always)
    package var longest: Int32 {
        let top = spill.isEmpty ? (high != 0 ? high : low) : spill[spill.count - 1]
        return Int32(truncatingIfNeeded: top >> 32)
    }

    /// True when nothing is counted.
    package var isEmpty: Bool { low == 0 && spill.isEmpty }

    /// Counts one more of `length`.
    @inline(__always)
    package mutating func add(_ length: Int32) {
        let key = UInt64(UInt32(bitPattern: length)) << 32
        guard spill.isEmpty else { return addToSpill(key) }
        if low & ~Self.countMask == key && low != 0 {
            low += 1
        } else if high & ~Self.countMask == key && high != 0 {
            high += 1
        } else if low == 0 {
            low = key | 1
        } else if high == 0 {
            if key < low { (low, high) = (key | 1, low) } else { high = key | 1 }
        } else {
            spill = [low, high, key | 1].sorted()
            (low, high) = (0, 0)
        }
    }

    /// Counts one fewer of `length` (counted before).
    @inline(__always)
    package mutating func remove(_ length: Int32) {
        let key = UInt64(UInt32(bitPattern: length)) << 32
        guard spill.isEmpty else { return removeFromSpill(key) }
        if low & ~Self.countMask == key && low != 0 {
            if low & Self.countMask > 1 { low -= 1 } else { (low, high) = (high, 0) }
        } else if high & ~Self.countMask == key && high != 0 {
            if high & Self.countMask > 1 { high -= 1 } else { high = 0 }
        }
    }

    /// ``add(_:)`` with three or more distinct lengths.
    private mutating func addToSpill(_ key: UInt64) {
        let index = place(of: key)
        if index < spill.count && spill[index] & ~Self.countMask == key {
            spill[index] += 1
        } else {
            spill.insert(key | 1, at: index)
        }
    }

    /// ``remove(_:)`` with three or more distinct lengths: back inline once at
    /// most one is left (not at two, so a group moving between two and three
    /// lengths does not allocate each time).
    private mutating func removeFromSpill(_ key: UInt64) {
        let index = place(of: key)
        guard index < spill.count && spill[index] & ~Self.countMask == key else { return }
        if spill[index] & Self.countMask > 1 {
            spill[index] -= 1
            return
        }
        spill.remove(at: index)
        if spill.count <= 1 {
            low = spill.first ?? 0
            spill = []
        }
    }

    /// The first place in ``spill`` whose length is not below the one in `key`.
    private func place(of key: UInt64) -> Int {
        var low = 0, high = spill.count
        while low < high {
            let middle = (low + high) / 2
            if spill[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The entries, ascending, wherever they are kept.
    private var entries: [UInt64] { spill.isEmpty ? [low, high].filter { $0 != 0 } : spill }

    /// How many are counted in all (for the invariant checker).
    package var total: Int { entries.reduce(0) { $0 + Int($1 & Self.countMask) } }

    /// The same lengths with the same counts, however they are kept.
    package static func == (a: LengthTally, b: LengthTally) -> Bool { a.entries == b.entries }

    /// A tally of `lengths` (for the invariant checker).
    package init<S: Sequence>(counting lengths: S) where S.Element == Int32 {
        for length in lengths { add(length) }
    }
}
