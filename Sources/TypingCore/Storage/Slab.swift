/// Records addressed by small stable numbers, with a free list: the storage of
/// the engine's users, conversations and streaks.
///
/// A freed record is reset to `vacant` (dropping what it held) and its number
/// reused. Free records at the end are dropped, and the storage shrinks when it
/// is mostly unused, so memory follows what is live: after everyone leaves,
/// nothing of them remains.
package struct Slab<Record> {
    /// The records, live and free.
    package private(set) var records: [Record] = []
    /// Free numbers, possibly past the end (those are skipped).
    private(set) var free: [Int32] = []
    /// Which numbers are live.
    private(set) var live: [Bool] = []
    /// Live records.
    package private(set) var count = 0
    /// What a free record holds.
    let vacant: Record

    /// An empty slab whose free records hold `vacant`.
    package init(vacant: Record) {
        self.vacant = vacant
    }

    /// Stores `record` under a free number (or a new one) and returns it.
    package mutating func insert(_ record: Record) -> Int32 {
        count += 1
        while let number = free.popLast() {
            if Int(number) < records.count {
                records[Int(number)] = record
                live[Int(number)] = true
                return number
            }
        }
        records.append(record)
        live.append(true)
        return Int32(records.count - 1)
    }

    /// Frees record `number`.
    package mutating func remove(_ number: Int32) {
        records[Int(number)] = vacant
        live[Int(number)] = false
        count -= 1
        if Int(number) == records.count - 1 {
            while let last = live.last, !last {
                records.removeLast()
                live.removeLast()
            }
            shrinkIfSparse()
        } else {
            free.append(number)
        }
    }

    /// True when `number` is a live record.
    package func contains(_ number: Int32) -> Bool {
        number >= 0 && Int(number) < live.count && live[Int(number)]
    }

    /// Calls `body` with each live record and its number, in number order.
    package func forEachLive(_ body: (Int32, Record) -> Void) {
        for index in records.indices where live[index] { body(Int32(index), records[index]) }
    }

    /// The numbers of the free records (the invariant checker's view of `free`).
    var freeNumbers: [Int32] { free.filter { Int($0) < records.count } }

    /// Damages the count, for the checker's own tests (in builds with the checker).
    package mutating func corruptCountForTesting() {
        #if TYPINGD_INTERNAL_CHECKS
        count += 1
        #endif
    }

    /// Gives storage back when less than a quarter of it is in use.
    private mutating func shrinkIfSparse() {
        guard records.capacity > 64, records.count * 4 < records.capacity else { return }
        records = records.withUnsafeBufferPointer { Array($0) }
        live = live.withUnsafeBufferPointer { Array($0) }
        free = free.filter { Int($0) < records.count }
        if free.capacity > 64 && free.count * 4 < free.capacity {
            free = free.withUnsafeBufferPointer { Array($0) }
        }
    }

    /// Record `number`, borrowed in place (a getter would copy the whole record,
    /// retaining everything it holds, on every field read).
    @inline(__always)
    package subscript(number: Int32) -> Record {
        _read { yield records[Int(number)] }
        _modify { yield &records[Int(number)] }
    }
}
