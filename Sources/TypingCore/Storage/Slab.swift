/// Records addressed by small stable numbers, with a free list: the storage of
/// the engine's users, conversations and streaks.
///
/// A freed record is reset to `vacant` (dropping what it held) and its number
/// reused. Free records at the end are dropped, and the storage shrinks when it
/// is mostly unused, so memory follows what is live: after everyone leaves,
/// nothing of them remains.
package struct Slab<Record, Index: SlabIndex> {
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
    package mutating func insert(_ record: Record) -> Index {
        count += 1
        while let number = free.popLast() {
            if Int(number) < records.count {
                records[Int(number)] = record
                live[Int(number)] = true
                return Index(rawValue: number)
            }
        }
        records.append(record)
        live.append(true)
        return Index(rawValue: Int32(records.count - 1))
    }

    /// Frees record `number`.
    package mutating func remove(_ index: Index) {
        let number = index.rawValue
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
    package func contains(_ index: Index) -> Bool {
        index.rawValue >= 0 && Int(index.rawValue) < live.count && live[Int(index.rawValue)]
    }

    /// Calls `body` with each live record and its number, in number order.
    package func forEachLive(_ body: (Index, Record) -> Void) {
        for index in records.indices where live[index] { body(Index(rawValue: Int32(index)), records[index]) }
    }

    /// The numbers of the live records, in number order.
    package var liveIndices: [Index] {
        records.indices.filter { live[$0] }.map { Index(rawValue: Int32($0)) }
    }

    /// The numbers of the free records (the invariant checker's view of `free`).
    var freeNumbers: [Index] { free.filter { Int($0) < records.count }.map(Index.init(rawValue:)) }

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
    package subscript(index: Index) -> Record {
        _read { yield records[Int(index.rawValue)] }
        _modify { yield &records[Int(index.rawValue)] }
    }
}

/// The number of a record in a ``Slab``: a distinct type per kind of record, so
/// that a user's number cannot be used where a conversation's is meant. Each is
/// an `Int32` in a struct, as cheap to store and pass as the number itself.
package protocol SlabIndex: Hashable, Comparable, Sendable, CustomStringConvertible {
    init(rawValue: Int32)
    var rawValue: Int32 { get }
}

extension SlabIndex {
    /// No record (-1): the end of a list, a member who does not type, …
    @inline(__always) package static var none: Self { Self(rawValue: -1) }
    /// True for ``none``.
    @inline(__always) package var isNone: Bool { rawValue < 0 }
    @inline(__always) package static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    package var description: String { "\(rawValue)" }
}

/// A user's number in ``Engine/users``.
package struct UserIndex: SlabIndex {
    package var rawValue: Int32
    @inline(__always) package init(rawValue: Int32) { self.rawValue = rawValue }
}

/// A conversation's number in ``Engine/conversations``.
package struct ConversationIndex: SlabIndex {
    package var rawValue: Int32
    @inline(__always) package init(rawValue: Int32) { self.rawValue = rawValue }
}

/// A typing streak's number in ``Engine/streaks``.
package struct StreakIndex: SlabIndex {
    package var rawValue: Int32
    @inline(__always) package init(rawValue: Int32) { self.rawValue = rawValue }
}

/// A membership's number in ``Engine/memberships``.
package struct MembershipIndex: SlabIndex {
    package var rawValue: Int32
    @inline(__always) package init(rawValue: Int32) { self.rawValue = rawValue }
}
