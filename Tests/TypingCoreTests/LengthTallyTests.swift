import Testing
import TypingCore
import TypingTestSupport

/// ``LengthTally`` keeps one or two lengths inline and more in an array: random adds
/// and removes, against a dictionary, across every move between the two.
@Suite("Length tallies")
struct LengthTallyTests {
    @Test(
        "random adds and removes agree with a dictionary: the longest, the total, emptiness, equality however kept",
        arguments: 0..<40)
    func againstDictionary(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed))
        var tally = LengthTally()
        var counts: [Int32: Int] = [:]
        // Few distinct lengths in most seeds, many in some: both ways of keeping them.
        let spread = [2, 3, 4, 8, 40][seed % 5]
        for step in 0..<2_000 {
            let length = Int32(rng.next() % UInt64(spread)) * 7
            if rng.next() % 2 == 0 || counts.isEmpty {
                tally.add(length)
                counts[length, default: 0] += 1
            } else {
                let present = counts.keys.sorted()
                let chosen = present[Int(rng.next() % UInt64(present.count))]
                tally.remove(chosen)
                counts[chosen]! -= 1
                if counts[chosen] == 0 { counts[chosen] = nil }
            }
            let expectedLongest = counts.keys.max() ?? 0
            guard tally.longest == expectedLongest, tally.isEmpty == counts.isEmpty,
                tally.total == counts.values.reduce(0, +)
            else {
                Issue.record(
                    "seed \(seed), step \(step): longest \(tally.longest), expected \(expectedLongest); total \(tally.total), expected \(counts.values.reduce(0, +))"
                )
                return
            }
            let rebuilt = LengthTally(
                counting: counts.flatMap { Array(repeating: $0.key, count: $0.value) }.shuffled(using: &rng))
            guard tally == rebuilt else {
                Issue.record("seed \(seed), step \(step): the tally differs from one counted afresh")
                return
            }
        }
    }

    @Test("removing a length never counted changes nothing")
    func removeAbsent() {
        var tally = LengthTally()
        tally.add(5)
        tally.remove(9)
        #expect(tally.longest == 5 && tally.total == 1)
        for length: Int32 in [1, 2, 3, 4] { tally.add(length) }
        tally.remove(9)
        #expect(tally.longest == 5 && tally.total == 5)
    }
}
