/// An open-addressing hash index from keys kept elsewhere (the engine's record
/// arrays) to record numbers: 8 bytes a slot, load at most one half.
///
/// A slot holds the upper 32 bits of the key's hash (which also give its home
/// position) and the record number + 1 (0 marks an empty slot), so most misses
/// are told apart without touching the records. Deletion shifts later entries
/// back (no tombstones), so lookups stay short however many ids come and go,
/// and the table shrinks when it empties.
package struct IndexTable {
    /// The slots; the count is a power of two.
    package private(set) var slots: [UInt64]
    /// Occupied slots.
    package private(set) var count = 0

    /// The smallest number of slots.
    package static let minimumCapacity = 16

    /// An empty table.
    package init() {
        slots = [UInt64](repeating: 0, count: IndexTable.minimumCapacity)
    }

    @inline(__always) private var mask: Int { slots.count - 1 }

    @inline(__always) private static func tag(_ hash: UInt64) -> UInt64 { hash >> 32 }

    @inline(__always) private func home(_ tag: UInt64) -> Int { Int(truncatingIfNeeded: tag) & mask }

    /// The record whose key has `hash` and for which `matches` is true.
    @inline(__always)
    package func find<Index: SlabIndex>(hash: UInt64, matches: (Index) -> Bool) -> Index? {
        let tag = IndexTable.tag(hash)
        var position = home(tag)
        while true {
            let slot = slots[position]
            if slot == 0 { return nil }
            if slot >> 32 == tag {
                let record = Index(rawValue: Int32(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1)
                if matches(record) { return record }
            }
            position = (position + 1) & mask
        }
    }

    /// Adds `record` under `hash` (its key must not be in the table yet).
    package mutating func insert<Index: SlabIndex>(hash: UInt64, record: Index) {
        if (count + 1) * 2 > slots.count { resize(to: slots.count * 2) }
        place(IndexTable.tag(hash) << 32 | UInt64(UInt32(record.rawValue) + 1))
        count += 1
    }

    /// Removes `record`, filed under `hash`.
    package mutating func remove<Index: SlabIndex>(hash: UInt64, record: Index) {
        let wanted = IndexTable.tag(hash) << 32 | UInt64(UInt32(record.rawValue) + 1)
        var hole = home(IndexTable.tag(hash))
        while slots[hole] != wanted {
            if slots[hole] == 0 { return }
            hole = (hole + 1) & mask
        }
        var next = hole
        while true {
            next = (next + 1) & mask
            let slot = slots[next]
            if slot == 0 { break }
            let ideal = home(slot >> 32)
            // Move the entry back if its home is not in the cyclic range (hole, next].
            let inRange = hole <= next ? (ideal > hole && ideal <= next) : (ideal > hole || ideal <= next)
            if !inRange {
                slots[hole] = slot
                hole = next
            }
        }
        slots[hole] = 0
        count -= 1
        if slots.count > IndexTable.minimumCapacity && count * 8 < slots.count {
            resize(to: slots.count / 2)
        }
    }

    /// Puts a slot value at the first free position from its home.
    private mutating func place(_ value: UInt64) {
        var position = home(value >> 32)
        while slots[position] != 0 { position = (position + 1) & mask }
        slots[position] = value
    }

    /// Moves the first entry to `position`, away from its home, for the checker's
    /// own tests (in builds with the checker).
    package mutating func corruptForTesting(position: Int) {
        #if TYPINGD_INTERNAL_CHECKS
        guard let first = slots.firstIndex(where: { $0 != 0 }) else { return }
        slots[position & mask] = slots[first]
        slots[first] = 0
        #endif
    }

    /// Rehashes into `capacity` slots.
    private mutating func resize(to capacity: Int) {
        let old = slots
        slots = [UInt64](repeating: 0, count: capacity)
        for slot in old where slot != 0 { place(slot) }
    }
}
