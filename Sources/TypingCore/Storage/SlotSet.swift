/// A set of member slots, walked in slot (join) order: the audience of a
/// conversation's main timeline (see ``ConversationRecord/mainAudience``), the
/// viewers of a thread, the open views and the screens waiting to be told.
///
/// Three forms, each chosen by what the set holds, so that inserting or removing a
/// slot costs O(levels) or O(1) amortised whatever the order, and an idle set costs
/// little memory however large its room:
/// - slots 0–63 only (most rooms have no more): one word kept inline, no storage;
/// - up to ``sparseLimit`` slots, some past 63: a sorted array of them (a thread
///   with a few viewers in a room of 100,000 keeps a few numbers, not a bit per
///   slot of the room);
/// - more: one bit per slot, and above them summary levels, each with one bit per
///   word of the level below that holds any bit. Walking the set costs O(its
///   members + levels per gap), never O(slots). It goes back to the array when it
///   shrinks to a quarter of ``sparseLimit``.
package struct SlotSet {
    /// Slots 0–63, while ``levels`` and ``sparse`` are empty.
    private(set) var small: UInt64 = 0
    /// The slots, ascending, while the set holds a slot past 63 and at most
    /// ``sparseLimit`` slots (``levels`` is empty then).
    private(set) var sparse: [Int32] = []
    /// Past ``sparseLimit`` slots, the levels: `levels[0]` holds a bit per
    /// slot; in `levels[k]`, bit b of word w is set when word 64 × w + b of
    /// `levels[k − 1]` is not zero. The last level has one word.
    private(set) var levels: [[UInt64]] = []
    /// Members.
    package private(set) var count = 0

    /// True when the set holds no slot.
    @inline(__always)
    package var isEmpty: Bool { count == 0 }

    /// The entries and words the set keeps in storage of its own (0 while its
    /// slots fit the inline word, or it is empty).
    package var storedEntries: Int { sparse.capacity + levels.reduce(0) { $0 + $1.capacity } }

    /// The most slots kept as a sorted array: inserting in it moves at most this
    /// many.
    package static let sparseLimit = 64

    #if TYPINGD_INTERNAL_CHECKS
    /// Words and array entries read or written by inserts and removals so far, for
    /// tests that count what entering and leaving a set costs.
    package private(set) var work = 0
    #endif

    /// An empty set.
    package init() {}

    /// True when `slot` is in the set.
    @inline(__always)
    package func contains(_ slot: Int) -> Bool {
        guard let leaves = levels.first else {
            if sparse.isEmpty { return slot < 64 && small & (1 << UInt64(slot)) != 0 }
            let index = sparsePlace(of: slot)
            return index < sparse.count && Int(sparse[index]) == slot
        }
        guard slot >> 6 < leaves.count else { return false }
        return leaves[slot >> 6] & (1 << UInt64(slot & 63)) != 0
    }

    /// Adds `slot` (0 or more).
    @inline(__always)
    package mutating func insert(_ slot: Int) {
        if levels.isEmpty && sparse.isEmpty && slot < 64 {
            let bit: UInt64 = 1 << UInt64(slot)
            if small & bit == 0 {
                small |= bit
                count += 1
            }
            return
        }
        if levels.isEmpty {
            insertInSparse(slot)
        } else {
            insertInLevels(slot)
        }
    }

    /// ``insert(_:)`` past the inline word, while there are no levels: into the
    /// sorted array, which becomes the levels when it would pass ``sparseLimit``.
    private mutating func insertInSparse(_ slot: Int) {
        if sparse.isEmpty {
            // The inline word's slots move to the array first.
            var bits = small
            sparse.reserveCapacity(bits.nonzeroBitCount + 1)
            while bits != 0 {
                sparse.append(Int32(bits.trailingZeroBitCount))
                bits &= bits - 1
            }
            small = 0
        }
        let index = sparsePlace(of: slot)
        if index < sparse.count && Int(sparse[index]) == slot { return }
        if sparse.count < SlotSet.sparseLimit {
            #if TYPINGD_INTERNAL_CHECKS
            work += sparse.count - index + 1
            #endif
            sparse.insert(Int32(slot), at: index)
            count += 1
            return
        }
        // Full: the slots become the levels.
        let held = sparse
        sparse = []
        count = 0
        grow(toHold: max(slot, Int(held[held.count - 1])))
        for member in held { insertInLevels(Int(member)) }
        insertInLevels(slot)
    }

    /// The first place in ``sparse`` whose slot is not below `slot`.
    @inline(__always)
    private func sparsePlace(of slot: Int) -> Int {
        var low = 0, high = sparse.count
        while low < high {
            let middle = (low + high) / 2
            if Int(sparse[middle]) < slot { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// ``insert(_:)`` once there are levels.
    private mutating func insertInLevels(_ slot: Int) {
        if slot >> 6 >= levels[0].count { grow(toHold: slot) }
        var index = slot
        for level in levels.indices {
            #if TYPINGD_INTERNAL_CHECKS
            work += 1
            #endif
            let word = index >> 6, bit: UInt64 = 1 << UInt64(index & 63)
            let before = levels[level][word]
            if before & bit != 0 {
                // Already there (level 0), or the word was already marked above.
                return
            }
            levels[level][word] = before | bit
            if level == 0 { count += 1 }
            // A word that already held a bit is marked in the level above.
            if before != 0 { return }
            index = word
        }
    }

    /// Removes `slot`, if present.
    @inline(__always)
    package mutating func remove(_ slot: Int) {
        if levels.isEmpty {
            if sparse.isEmpty {
                let bit: UInt64 = slot < 64 ? 1 << UInt64(slot) : 0
                if small & bit != 0 {
                    small &= ~bit
                    count -= 1
                }
            } else {
                removeFromSparse(slot)
            }
            return
        }
        removeFromLevels(slot)
    }

    /// ``remove(_:)`` from the sorted array; the last one gives its storage back.
    private mutating func removeFromSparse(_ slot: Int) {
        let index = sparsePlace(of: slot)
        guard index < sparse.count && Int(sparse[index]) == slot else { return }
        #if TYPINGD_INTERNAL_CHECKS
        work += sparse.count - index
        #endif
        count -= 1
        if count == 0 {
            sparse = []
        } else {
            sparse.remove(at: index)
        }
    }

    /// ``remove(_:)`` once there are levels.
    private mutating func removeFromLevels(_ slot: Int) {
        guard contains(slot) else { return }
        count -= 1
        var index = slot
        for level in levels.indices {
            #if TYPINGD_INTERNAL_CHECKS
            work += 1
            #endif
            let word = index >> 6, bit: UInt64 = 1 << UInt64(index & 63)
            levels[level][word] &= ~bit
            // A word that still holds a bit stays marked above.
            if levels[level][word] != 0 { break }
            index = word
        }
        if count <= SlotSet.sparseLimit / 4 { shrinkToSparse() }
    }

    /// The levels become the sorted array again: the set shrank to a quarter of
    /// what the array holds, so the walk (O(members + levels per gap)) is paid for
    /// by the removals since it grew past ``sparseLimit``.
    private mutating func shrinkToSparse() {
        var held: [Int32] = []
        held.reserveCapacity(count)
        var cursor = next(from: 0)
        while let slot = cursor {
            held.append(Int32(slot))
            cursor = next(from: slot + 1)
        }
        #if TYPINGD_INTERNAL_CHECKS
        work += held.count
        #endif
        levels = []
        small = 0
        sparse = []
        count = 0
        for slot in held { insert(Int(slot)) }
    }

    /// Empties the set and gives its storage back.
    package mutating func removeAll() {
        small = 0
        sparse = []
        levels = []
        count = 0
    }

    /// The smallest member at or after `slot`, or nil.
    @inline(__always)
    package func next(from slot: Int) -> Int? {
        guard let leaves = levels.first else {
            if !sparse.isEmpty {
                let index = sparsePlace(of: slot)
                return index < sparse.count ? Int(sparse[index]) : nil
            }
            guard slot < 64 else { return nil }
            let bits = small & (~0 << UInt64(slot))
            return bits == 0 ? nil : bits.trailingZeroBitCount
        }
        let word = slot >> 6
        guard word < leaves.count else { return nil }
        let bits = leaves[word] & (~0 << UInt64(slot & 63))
        if bits != 0 { return word << 6 | bits.trailingZeroBitCount }
        return nextWord(after: word, level: 0).map { $0 << 6 | leaves[$0].trailingZeroBitCount }
    }

    /// The first word after `word` of level `level` that is not zero: found in
    /// the summary above, climbing only as far as the next marked word is.
    private func nextWord(after word: Int, level: Int) -> Int? {
        let above = level + 1
        guard above < levels.count else { return nil }
        let index = word + 1
        let summaryWord = index >> 6
        guard summaryWord < levels[above].count else { return nil }
        let bits = levels[above][summaryWord] & (~0 << UInt64(index & 63))
        if bits != 0 { return summaryWord << 6 | bits.trailingZeroBitCount }
        return nextWord(after: summaryWord, level: above)
            .map { $0 << 6 | levels[above][$0].trailingZeroBitCount }
    }

    /// Makes room for `slot`: level 0 grows to hold it (at least doubling, so
    /// that a room filling up grows it O(log slots) times), and summary levels are
    /// added until the top one has a single word.
    private mutating func grow(toHold slot: Int) {
        if levels.isEmpty { levels = [[0]] }
        var needed = max((slot >> 6) + 1, 2 * (levels.first?.count ?? 0))
        var level = 0
        while true {
            if level == levels.count { levels.append([]) }
            if levels[level].count < needed {
                levels[level].append(contentsOf: repeatElement(0, count: needed - levels[level].count))
            }
            if needed <= 1 { break }
            needed = (needed + 63) >> 6
            level += 1
        }
        // The new summary words are marked from the words below them.
        for level in 1..<levels.count {
            for (index, word) in levels[level - 1].enumerated() where word != 0 {
                levels[level][index >> 6] |= 1 << UInt64(index & 63)
            }
        }
    }

    /// The members, in order (for tests and the invariant checker).
    package var elements: [Int] {
        var result: [Int] = []
        var cursor = next(from: 0)
        while let slot = cursor {
            result.append(slot)
            cursor = next(from: slot + 1)
        }
        return result
    }

    /// What disagrees in the levels; empty when sound.
    package func violations() -> [String] {
        var problems: [String] = []
        guard let leaves = levels.first else {
            if sparse.isEmpty {
                if count != small.nonzeroBitCount {
                    problems.append("counts \(count) members, holds \(small.nonzeroBitCount)")
                }
                return problems
            }
            if small != 0 { problems.append("keeps slots inline beside its array") }
            if count != sparse.count { problems.append("counts \(count) members, holds \(sparse.count)") }
            if sparse.count > SlotSet.sparseLimit { problems.append("keeps \(sparse.count) slots in its array") }
            if zip(sparse, sparse.dropFirst()).contains(where: { $0 >= $1 }) {
                problems.append("its array is not ascending")
            }
            return problems
        }
        if small != 0 || !sparse.isEmpty { problems.append("keeps slots inline or in an array beside its levels") }
        if count <= SlotSet.sparseLimit / 4 { problems.append("keeps levels for \(count) members") }
        let held = leaves.reduce(0) { $0 + $1.nonzeroBitCount }
        if held != count { problems.append("counts \(count) members, holds \(held)") }
        for level in 1..<max(levels.count, 1) {
            let below = levels[level - 1]
            if levels[level].count != (below.count + 63) >> 6 {
                problems.append("level \(level) has \(levels[level].count) words for \(below.count) below")
                continue
            }
            for (index, word) in below.enumerated() {
                let marked = levels[level][index >> 6] & (1 << UInt64(index & 63)) != 0
                if marked != (word != 0) { problems.append("level \(level) marks word \(index) wrongly") }
            }
        }
        if let top = levels.last, top.count > 1 { problems.append("the top level has \(top.count) words") }
        return problems
    }
}

extension SlotSet: Equatable {
    /// Two sets are equal when they hold the same slots, whatever their form.
    package static func == (lhs: SlotSet, rhs: SlotSet) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.levels.isEmpty && rhs.levels.isEmpty && lhs.sparse.isEmpty && rhs.sparse.isEmpty {
            return lhs.small == rhs.small
        }
        return lhs.elements == rhs.elements
    }
}

extension SlotSet {
    /// A set of `slots` (for tests and remapping).
    package init<S: Sequence>(_ slots: S) where S.Element == Int {
        for slot in slots { insert(slot) }
    }
}
