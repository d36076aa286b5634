/// A set of member slots, walked in slot (join) order: the audience of a
/// conversation's main timeline (see ``ConversationRecord/mainAudience``).
///
/// One bit per slot, and above them summary levels, each with one bit per word of
/// the level below that holds any bit: inserting or removing a slot costs
/// O(levels), and walking the set costs O(its members + levels per gap), never
/// O(slots). So a room of 100,000 members of whom 10 receive typing at the main
/// timeline renders those 10 and skips the rest in a few word reads. Slots 0–63
/// (most rooms have no more) are one word kept inline: no storage at all.
package struct SlotSet: Equatable {
    /// Slots 0–63, while ``levels`` is empty.
    private(set) var small: UInt64 = 0
    /// Once a slot past 63 was inserted, the levels: `levels[0]` holds a bit per
    /// slot; in `levels[k]`, bit b of word w is set when word 64 × w + b of
    /// `levels[k − 1]` is not zero. The last level has one word.
    private(set) var levels: [[UInt64]] = []
    /// Members.
    package private(set) var count = 0

    /// An empty set.
    package init() {}

    /// True when `slot` is in the set.
    @inline(__always)
    package func contains(_ slot: Int) -> Bool {
        guard let leaves = levels.first else { return slot < 64 && small & (1 << UInt64(slot)) != 0 }
        guard slot >> 6 < leaves.count else { return false }
        return leaves[slot >> 6] & (1 << UInt64(slot & 63)) != 0
    }

    /// Adds `slot` (0 or more).
    @inline(__always)
    package mutating func insert(_ slot: Int) {
        if levels.isEmpty && slot < 64 {
            let bit: UInt64 = 1 << UInt64(slot)
            if small & bit == 0 {
                small |= bit
                count += 1
            }
            return
        }
        insertInLevels(slot)
    }

    /// ``insert(_:)`` past the inline word.
    private mutating func insertInLevels(_ slot: Int) {
        if levels.isEmpty || slot >> 6 >= levels[0].count { grow(toHold: slot) }
        var index = slot
        for level in levels.indices {
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
            let bit: UInt64 = slot < 64 ? 1 << UInt64(slot) : 0
            if small & bit != 0 {
                small &= ~bit
                count -= 1
            }
            return
        }
        removeFromLevels(slot)
    }

    /// ``remove(_:)`` once there are levels.
    private mutating func removeFromLevels(_ slot: Int) {
        guard contains(slot) else { return }
        count -= 1
        var index = slot
        for level in levels.indices {
            let word = index >> 6, bit: UInt64 = 1 << UInt64(index & 63)
            levels[level][word] &= ~bit
            // A word that still holds a bit stays marked above.
            if levels[level][word] != 0 { return }
            index = word
        }
    }

    /// Empties the set and gives its storage back.
    mutating func removeAll() {
        small = 0
        levels = []
        count = 0
    }

    /// The smallest member at or after `slot`, or nil.
    @inline(__always)
    package func next(from slot: Int) -> Int? {
        guard let leaves = levels.first else {
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
        if levels.isEmpty {
            // The inline word becomes the first word of level 0.
            levels = [[small]]
            small = 0
        }
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
            if count != small.nonzeroBitCount { problems.append("counts \(count) members, holds \(small.nonzeroBitCount)") }
            return problems
        }
        if small != 0 { problems.append("keeps slots inline beside its levels") }
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
