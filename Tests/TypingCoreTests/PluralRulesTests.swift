import Testing
import TypingCore
import TypingTestSupport

/// CLDR plural conditions for whole numbers (Protocol.md#languages).
@Suite("Plural rules")
struct PluralRulesTests {
    /// CLDR's cardinal rules for the languages typingd ships tables for.
    static let russian: [PluralCategory: String] = [
        .one: "v = 0 and i % 10 = 1 and i % 100 != 11 @integer 1, 21, 31",
        .few: "v = 0 and i % 10 = 2..4 and i % 100 != 12..14",
        .many: "v = 0 and i % 10 = 0 or v = 0 and i % 10 = 5..9 or v = 0 and i % 100 = 11..14"
    ]
    static let arabic: [PluralCategory: String] = [
        .zero: "n = 0", .one: "n = 1", .two: "n = 2", .few: "n % 100 = 3..10", .many: "n % 100 = 11..99"
    ]
    static let french: [PluralCategory: String] = [
        .one: "i = 0,1", .many: "e = 0 and i != 0 and i % 1000000 = 0 and v = 0 or e != 0..5"
    ]

    @Test("Russian: one, few, many by the last digits")
    func russian() throws {
        let rules = try PluralRules(Self.russian)
        let expected: [(Int, PluralCategory)] = [
            (0, .many), (1, .one), (2, .few), (4, .few), (5, .many), (11, .many),
            (12, .many), (21, .one), (22, .few), (111, .many), (1001, .one)
        ]
        for (count, category) in expected { #expect(rules.category(of: count) == category, "\(count)") }
    }

    @Test("Arabic: every category; French: one for 0 and 1, many for whole millions")
    func arabicAndFrench() throws {
        let arabic = try PluralRules(Self.arabic)
        #expect(
            [0, 1, 2, 3, 10, 11, 99, 100, 102, 111].map(arabic.category(of:))
                == [.zero, .one, .two, .few, .few, .many, .many, .other, .other, .many])
        let french = try PluralRules(Self.french)
        #expect(
            [0, 1, 2, 999_999, 1_000_000, 2_000_000].map(french.category(of:)) == [
                .one, .one, .other, .other, .many, .many
            ])
        #expect(PluralRules.none.category(of: 1) == .other)
    }

    @Test(
        "a condition that is not CLDR's syntax is refused, naming the category",
        arguments: [
            ("", "empty"), ("@integer 1", "empty"), ("x = 1", "operand"), ("n % 0 = 1", "modulus"),
            ("n = ", "number"), ("n == 1", "number"), ("n = 1 nor n = 2", "\"and\" or \"or\""),
            ("n = 3..1", "empty"), ("n = 99999999999999", "too large"), ("n < 1", "\"=\"")
        ])
    func refused(condition: String, says: String) {
        do {
            _ = try PluralRules([.few: condition])
            Issue.record("\(condition) was accepted")
        } catch {
            #expect(error.category == "few")
            #expect(error.message.contains(says), "\(condition): \(error.message)")
        }
    }
}

/// Plural rules compiled once: a rule's cost does not grow with its size, and the
/// compiled evaluation says what CLDR's rules say, checked against a
/// straightforward evaluation of random rules.
@Suite("Plural rules, compiled")
struct CompiledPluralRulesTests {
    /// One relation as generated: `operand (% modulus)? (=|!=) ranges`.
    struct Relation: CustomStringConvertible {
        var operand: Character
        var modulus: Int?
        var equals: Bool
        var ranges: [ClosedRange<Int>]

        var description: String {
            operand.description + (modulus.map { " % \($0)" } ?? "") + (equals ? " = " : " != ")
                + ranges.map {
                    $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)..\($0.upperBound)"
                }
                .joined(separator: ",")
        }

        /// What CLDR says, evaluated as written: for a whole number, `n` and `i`
        /// are the number, every other operand 0.
        func holds(for count: Int) -> Bool {
            var value = operand == "n" || operand == "i" ? count : 0
            if let modulus { value %= modulus }
            return ranges.contains { $0.contains(value) } == equals
        }
    }

    /// `or` of `and`s of relations.
    typealias Condition = [[Relation]]

    static func source(_ condition: Condition) -> String {
        condition.map { $0.map(\.description).joined(separator: " and ") }.joined(separator: " or ")
    }

    static func reference(_ conditions: [(PluralCategory, Condition)], _ count: Int) -> PluralCategory {
        for (category, condition) in conditions
        where condition.contains(where: { $0.allSatisfy { $0.holds(for: count) } }) {
            return category
        }
        return .other
    }

    /// A random value: mostly small, sometimes near a modulus or large.
    static func value(_ rng: inout some RandomNumberGenerator) -> Int {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0..<5: return Int.random(in: 0...30, using: &rng)
        case 5..<7: return Int.random(in: 0...120, using: &rng)
        case 7: return [9, 10, 11, 99, 100, 101, 999, 1000, 999_999, 1_000_000].randomElement(using: &rng) ?? 0
        case 8: return Int.random(in: 0...1_000_000, using: &rng)
        default: return Int.random(in: 0...1_000_000_000_000, using: &rng)
        }
    }

    static func relation(_ rng: inout some RandomNumberGenerator) -> Relation {
        let operand: Character =
            Int.random(in: 0..<4, using: &rng) == 0
            ? "vwftce".randomElement(using: &rng) ?? "v" : Bool.random(using: &rng) ? "n" : "i"
        let moduli = [1, 2, 3, 7, 10, 100, 1000, 1_000_000, 1_000_000_000_000]
        let modulus = Int.random(in: 0..<3, using: &rng) == 0 ? nil : moduli.randomElement(using: &rng)
        let count =
            Int.random(in: 0..<8, using: &rng) == 0
            ? Int.random(in: 20...200, using: &rng) : Int.random(in: 1...4, using: &rng)
        let ranges = (0..<count).map { _ -> ClosedRange<Int> in
            let low = value(&rng)
            if Bool.random(using: &rng) { return low...low }
            let span = Int.random(in: 0..<4, using: &rng) == 0 ? value(&rng) : Int.random(in: 0...20, using: &rng)
            return low...min(low + span, 1_000_000_000_000)
        }
        return Relation(
            operand: operand, modulus: modulus, equals: Int.random(in: 0..<3, using: &rng) != 0, ranges: ranges)
    }

    static func condition(_ rng: inout some RandomNumberGenerator) -> Condition {
        // Several single-relation alternatives on one modulus, sometimes: what
        // the compiler merges.
        if Int.random(in: 0..<4, using: &rng) == 0 {
            let shared = relation(&rng)
            return (0..<Int.random(in: 2...6, using: &rng)).map { _ in
                var one = relation(&rng)
                one.operand = shared.operand
                one.modulus = shared.modulus
                return [one]
            }
        }
        return (0..<Int.random(in: 1...3, using: &rng)).map { _ in
            (0..<Int.random(in: 1...3, using: &rng)).map { _ in relation(&rng) }
        }
    }

    @Test(
        "compiled rules say what CLDR's rules say, for 150 random rule sets and counts 0…10^6 and near 2^53",
        .seedOnFailure)
    func againstReference() throws {
        var rng = SplitMix64.replayable()
        let near53 = (1 << 53) - 500...(1 << 53) + 500
        for _ in 0..<150 {
            var conditions: [(PluralCategory, Condition)] = []
            for category in PluralCategory.allCases where category != .other && Bool.random(using: &rng) {
                conditions.append((category, Self.condition(&rng)))
            }
            let sources = Dictionary(uniqueKeysWithValues: conditions.map { ($0.0, Self.source($0.1)) })
            let rules = try PluralRules(sources)
            var counts = Array(0...300) + Array(near53)
            counts += (0..<1_000).map { _ in Int.random(in: 0...1_000_000, using: &rng) }
            counts += [999_999, 1_000_000, 1_000_001, Int(Int32.max), (1 << 53) - 1]
            let wrong = counts.first { rules.category(of: $0) != Self.reference(conditions, $0) }
            #expect(
                wrong == nil,
                "\(sources) at \(wrong ?? -1): \(wrong.map(rules.category(of:))?.rawValue ?? "") instead of \(wrong.map { Self.reference(conditions, $0).rawValue } ?? "")"
            )
            if wrong != nil { return }
        }
    }

    @Test("Cornish, CLDR's longest rule (5 tests once compiled), by CLDR's samples")
    func cornish() throws {
        let rules = try PluralRules([
            .zero: "n = 0", .one: "n = 1",
            .two:
                "n % 100 = 2,22,42,62,82 or n % 1000 = 0 and n % 100000 = 1000..20000,40000,60000,80000 or n != 0 and n % 1000000 = 100000",
            .few: "n % 100 = 3,23,43,63,83", .many: "n != 1 and n % 100 = 1,21,41,61,81"
        ])
        let samples: [(PluralCategory, [Int])] = [
            (.zero, [0]), (.one, [1]), (.two, [2, 22, 42, 62, 82, 102, 122, 142, 1000, 10000, 100000, 1_100_000]),
            (.few, [3, 23, 43, 63, 83, 103, 123, 143, 1003]), (.many, [21, 41, 61, 81, 101, 121, 141, 161, 1001]),
            (.other, Array(4...19) + [100, 1004, 1_000_000, 21_000, 2_000_000])
        ]
        for (category, counts) in samples {
            for count in counts { #expect(rules.category(of: count) == category, "\(count)") }
        }
    }

    @Test("a condition that tests the count in more than maxTests ways once merged is refused; merged ones are taken")
    func tooManyTests() throws {
        let distinct = (0..<9).map { "n % \($0 + 2) = 1 and n % \($0 + 20) = 0" }.joined(separator: " or ")
        do {
            _ = try PluralRules([.many: distinct])
            Issue.record("18 tests: accepted")
        } catch {
            #expect(error.category == "many" && error.message.contains("at most \(PluralRules.maxTests)"), "\(error)")
        }
        // 95,000 alternatives on one operand and modulus, and an and of 1,000
        // relations on it: one test each.
        let alternatives = (0..<95_000).map { "n % 1000000 = \($0 * 7)" }.joined(separator: " or ")
        let conjunction = (0..<1_000).map { "i != \($0 * 3)" }.joined(separator: " and ")
        let rules = try PluralRules([.one: alternatives, .few: conjunction])
        #expect(
            [0, 7, 664_993, 1_000_007, 665_000, 1, 3, 2_997, 2_998, 3_000].map(rules.category(of:))
                == [.one, .one, .one, .one, .few, .few, .other, .other, .few, .few])
    }

    @Test(
        "a rule of 95,000 ranges makes as many tests as a rule of 100: one bisection per relation, past the counts worked out at load"
    )
    func flatInSize() throws {
        func rule(_ ranges: Int) throws -> PluralRules {
            let list = (0..<ranges).map { "\(1_000 + 3 * $0)..\(1_001 + 3 * $0)" }.joined(separator: ",")
            return try PluralRules([.one: "n = \(list)", .few: "n % 1000000 = \(list)", .many: "i != \(list)"])
        }
        let small = try rule(100), big = try rule(95_000)
        // What a lookup costs is its tests (the time is bench/plurals.py's: 1.02-1.04x).
        #expect(small.testCount == 3 && big.testCount == small.testCount, "\(small.testCount), \(big.testCount)")
        let counts = (0..<300).map { 128 + $0 * 997 }
        #expect(counts.map(big.category(of:)).contains(.one))
        for count in [1_000, 1_001, 1_002, 1_003, 285_997, 285_998, 1_285_997, 1_000_000 + 1_000] {
            let inList = count >= 1_000 && count <= 285_998 && (count - 1_000) % 3 != 2
            let expected: PluralCategory =
                inList
                ? .one
                : (count % 1_000_000 >= 1_000 && count % 1_000_000 <= 285_998
                    && (count % 1_000_000 - 1_000) % 3 != 2) ? .few : .many
            #expect(big.category(of: count) == expected, "\(count)")
        }
    }
}
