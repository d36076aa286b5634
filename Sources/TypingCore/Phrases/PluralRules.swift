/// A CLDR plural category: which form of a word a count takes in a language.
public enum PluralCategory: String, Sendable, CaseIterable, Comparable {
    /// Arabic 0, Latvian 0, …
    case zero
    /// English 1, Russian 21, …
    case one
    /// Arabic 2, Slovenian 102, …
    case two
    /// Russian 2–4, Arabic 3–10, …
    case few
    /// Russian 5–20, Arabic 11–99, French 1000000, …
    case many
    /// Everything else: the category every language has.
    case other

    /// Ordered as CLDR lists them, `other` last.
    public static func < (lhs: PluralCategory, rhs: PluralCategory) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// A language's cardinal plural rules, in CLDR's syntax, for whole numbers
/// (Protocol.md#languages): a count's category is the first of `zero`, `one`, `two`,
/// `few`, `many` whose condition holds, else `other`.
///
/// A condition is `and ('or' and)*`; `and` is `relation ('and' relation)*`; a
/// relation is `operand ('%' value)? ('=' | '!=') range (',' range)*`, a range being
/// `value` or `value..value`; the operands are `n i v w f t c e`. For a whole number
/// n, the operands `n` and `i` are n and every other operand is 0. Anything from `@`
/// on (CLDR's samples) is ignored, and spaces between tokens are free.
///
/// Conditions are compiled when the rules are made, so that finding a count's
/// category costs the same however long the rules are (see `CompiledCondition`):
/// a condition may test the count in at most ``maxTests`` ways once compiled.
public struct PluralRules: Sendable, Equatable {
    /// What is wrong with a rule.
    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// The category whose condition is wrong (nil: the set of rules).
        public var category: String?
        /// What is wrong, for a person.
        public var message: String

        /// The message, with the category.
        public var description: String { category.map { "\"\($0)\": \(message)" } ?? message }
    }

    /// The conditions as given, by category (`other` never has one).
    public let sources: [PluralCategory: String]
    /// The compiled conditions, in category order (those that never hold left out).
    private let conditions: [(category: PluralCategory, condition: CompiledCondition)]
    /// The categories of 0 ..< 128, worked out once.
    private let small: [PluralCategory]

    /// The most ways one condition may test the count once compiled (relations on
    /// the count with different moduli, or in different `or` alternatives that
    /// cannot be merged): what bounds the cost of a category. CLDR's rules need
    /// at most 5.
    public static let maxTests = 16

    /// The tests a category of a count of 128 or more makes at most, over every
    /// condition: each is one bisection of a sorted interval set, so this (at most
    /// ``maxTests`` per category), not the length of the rules, is what a lookup
    /// costs.
    package var testCount: Int { conditions.reduce(0) { $0 + $1.condition.tests } }

    /// Rules with no condition: every count is `other` (Japanese, Chinese, …).
    public static let none = PluralRules(parsed: [:], conditions: [])

    /// Parses and compiles `conditions`, keyed by category; a condition for `other`
    /// is ignored. A condition that compiles to more than ``maxTests`` tests is an
    /// error.
    public init(_ conditions: [PluralCategory: String]) throws(Error) {
        var compiled: [(PluralCategory, CompiledCondition)] = []
        for category in PluralCategory.allCases where category != .other {
            guard let source = conditions[category] else { continue }
            do throws(Condition.Failure) {
                let condition = CompiledCondition(try Condition(parsing: source))
                guard condition.tests <= PluralRules.maxTests else {
                    throw Condition.Failure(
                        message:
                            "the condition tests the count in \(condition.tests) different ways once relations on the same modulus are merged; at most \(PluralRules.maxTests) are allowed (CLDR's rules need at most 5)"
                    )
                }
                if !condition.never { compiled.append((category, condition)) }
            } catch {
                throw Error(category: category.rawValue, message: error.message)
            }
        }
        var sources = conditions
        sources[.other] = nil
        self.init(parsed: sources, conditions: compiled)
    }

    private init(
        parsed sources: [PluralCategory: String], conditions: [(category: PluralCategory, condition: CompiledCondition)]
    ) {
        self.sources = sources
        self.conditions = conditions
        self.small = (0..<128).map { PluralRules.evaluate(conditions, $0) }
    }

    /// The category of the whole number `count` (0 or more).
    @inline(__always)
    public func category(of count: Int) -> PluralCategory {
        count >= 0 && count < small.count ? small[count] : PluralRules.evaluate(conditions, count)
    }

    private static func evaluate(_ conditions: [(category: PluralCategory, condition: CompiledCondition)], _ count: Int)
        -> PluralCategory
    {
        for (category, condition) in conditions where condition.holds(for: count) { return category }
        return .other
    }

    /// Equal when they were made from the same conditions.
    public static func == (lhs: PluralRules, rhs: PluralRules) -> Bool { lhs.sources == rhs.sources }
}

/// A condition compiled for whole numbers, so that its cost does not grow with its
/// length: at most ``PluralRules/maxTests`` binary searches, each in a sorted list
/// of intervals.
///
/// For a whole number every operand but `n` and `i` is 0, so a relation on one of
/// them is true or false once and for all: it is folded away (an `and` holding a
/// false one never holds; an `or` holding a true `and` always does). A relation on
/// the count is a test "`count % m` (the count itself for no modulus) is in a set",
/// `!=` being the complement of the set: its ranges are merged into sorted,
/// disjoint intervals (``IntervalSet``), searched by bisection. The tests of one
/// `and` on the same modulus are one test, of the intersection of their sets (the
/// complement of the union of their complements); the `or` alternatives that are a
/// single test each, on the same modulus, are one, of the union. What is left is
/// an `or` of `and`s of tests on distinct moduli: CLDR's rules leave one to five
/// tests, a rule of 95,000 ranges on one operand one, and a condition may leave at
/// most ``PluralRules/maxTests``. So a category costs at most 5 × 16 bisections,
/// whatever the rules' length.
fileprivate struct CompiledCondition: Sendable {
    /// `count % modulus` (the count itself for modulus 0) in `values`.
    struct Test: Sendable {
        var modulus: Int
        var values: IntervalSet

        @inline(__always)
        func holds(for count: Int) -> Bool {
            values.contains(modulus == 0 ? count : count % modulus)
        }
    }

    /// `or` of `and`s: empty, the condition never holds; an empty `and`, always.
    let alternatives: [[Test]]

    /// How many tests it makes, at most.
    var tests: Int { alternatives.reduce(0) { $0 + $1.count } }

    /// True when the condition never holds.
    var never: Bool { alternatives.isEmpty }

    /// Compiles `condition` in O(r log r) for r ranges in all: each set is built
    /// once, from all its ranges, sorted (never merged pairwise, which would be
    /// quadratic in the relations).
    init(_ condition: Condition) {
        var alternatives: [[Test]] = []
        // The ranges of the single-test alternatives, by modulus (their union).
        var single: [Int: [ClosedRange<Int>]] = [:]
        alternativeLoop: for relations in condition.alternatives {
            // By modulus, the values some relation of the `and` excludes: the
            // test's set is the complement of their union.
            var excluded: [Int: [ClosedRange<Int>]] = [:]
            for relation in relations {
                let modulus = relation.modulus ?? 0
                if !relation.isNumber || modulus == 1 {
                    // The value is 0 whatever the count.
                    guard relation.ranges.contains(where: { $0.contains(0) }) == relation.equals else {
                        continue alternativeLoop
                    }
                    continue
                }
                excluded[modulus, default: []] +=
                    relation.equals ? IntervalSet(relation.ranges).complement.ranges : relation.ranges
            }
            var tests: [Test] = []
            for (modulus, ranges) in excluded.sorted(by: { $0.key < $1.key }) {
                let values = IntervalSet(ranges).complement
                guard !values.isEmpty else { continue alternativeLoop }
                // A test every value passes says nothing (the values of `count % m`
                // are -(m-1)…m-1; of the count, every Int).
                if !values.covers(modulus == 0 ? Int.min...Int.max : (1 - modulus)...(modulus - 1)) {
                    tests.append(Test(modulus: modulus, values: values))
                }
            }
            switch tests.count {
            case 0:
                self.alternatives = [[]]
                return
            case 1:
                single[tests[0].modulus, default: []] += tests[0].values.ranges
            default:
                alternatives.append(tests)
            }
        }
        // Single tests first (the common case: CLDR's `or`s of one relation each).
        let merged = single.sorted { $0.key < $1.key }.map { [Test(modulus: $0.key, values: IntervalSet($0.value))] }
        self.alternatives = merged + alternatives
    }

    @inline(__always)
    func holds(for count: Int) -> Bool {
        alternatives.contains { tests in tests.allSatisfy { $0.holds(for: count) } }
    }
}

/// A set of whole numbers as sorted, disjoint, non-adjacent closed intervals:
/// membership by bisection, in O(log of the intervals).
fileprivate struct IntervalSet: Sendable, Equatable {
    /// The intervals' bounds, in increasing order: `lows[k]...highs[k]`, with
    /// `highs[k] + 1 < lows[k + 1]`.
    private(set) var lows: [Int] = [], highs: [Int] = []

    /// The union of `ranges`, in any order, overlapping or not.
    init(_ ranges: [ClosedRange<Int>]) {
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = highs.last, last == .max || range.lowerBound <= last + 1 {
                highs[highs.count - 1] = max(last, range.upperBound)
            } else {
                lows.append(range.lowerBound)
                highs.append(range.upperBound)
            }
        }
    }

    var isEmpty: Bool { lows.isEmpty }

    var ranges: [ClosedRange<Int>] { zip(lows, highs).map { $0...$1 } }

    /// Every Int not in the set.
    var complement: IntervalSet {
        var gaps: [ClosedRange<Int>] = []
        var next = Int.min // the least value not yet covered
        var done = false
        for (low, high) in zip(lows, highs) {
            if low > next { gaps.append(next...(low - 1)) }
            if high == .max { done = true; break }
            next = high + 1
        }
        if !done { gaps.append(next...Int.max) }
        return IntervalSet(gaps)
    }

    /// True when every value of `range` is in the set.
    func covers(_ range: ClosedRange<Int>) -> Bool {
        guard let k = index(of: range.lowerBound) else { return false }
        return highs[k] >= range.upperBound
    }

    @inline(__always)
    func contains(_ value: Int) -> Bool { index(of: value) != nil }

    /// The interval that holds `value`, if one does.
    @inline(__always)
    private func index(of value: Int) -> Int? {
        // The first interval starting after `value`; the one before may hold it.
        var low = 0, high = lows.count
        while low < high {
            let middle = (low + high) / 2
            if lows[middle] <= value { low = middle + 1 } else { high = middle }
        }
        return low > 0 && highs[low - 1] >= value ? low - 1 : nil
    }
}

/// One parsed condition: relations joined by `and`, those joined by `or`.
fileprivate struct Condition: Sendable {
    struct Relation: Sendable {
        /// True for `n` and `i` (the number itself); false for the operands that are 0.
        var isNumber: Bool
        var modulus: Int?
        var equals: Bool
        var ranges: [ClosedRange<Int>]
    }

    /// `or` of `and`s.
    var alternatives: [[Relation]]

    struct Failure: Swift.Error {
        var message: String
    }

    /// The largest value a condition may hold (CLDR's are below 10^7).
    static let maxValue = 1_000_000_000_000

    init(parsing source: String) throws(Failure) {
        var scanner = Scanner(Array(source.utf8))
        guard !scanner.atEnd else { throw Failure(message: "the condition is empty") }
        var alternatives: [[Relation]] = []
        var relations: [Relation] = []
        while true {
            relations.append(try scanner.relation())
            if scanner.atEnd { break }
            let word = try scanner.word()
            switch word {
            case "and": continue
            case "or":
                alternatives.append(relations)
                relations = []
            default:
                throw Failure(
                    message: "expected \"and\" or \"or\" at column \(scanner.column(of: word)), found \"\(word)\"")
            }
        }
        alternatives.append(relations)
        self.alternatives = alternatives
    }

    /// Tokens of a condition, up to `@` or the end.
    struct Scanner {
        let bytes: [UInt8]
        var position = 0
        /// Where the last token started, for messages.
        var tokenStart = 0

        init(_ bytes: [UInt8]) {
            let end = bytes.firstIndex(of: UInt8(ascii: "@")) ?? bytes.count
            self.bytes = Array(bytes[..<end])
            skipSpaces()
        }

        var atEnd: Bool { position >= bytes.count }

        mutating func skipSpaces() {
            while position < bytes.count && (bytes[position] == 0x20 || bytes[position] == 0x09) { position += 1 }
        }

        func column(of word: String) -> Int { tokenStart + 1 }

        var here: String { atEnd ? "the end" : "column \(position + 1)" }

        mutating func word() throws(Failure) -> String {
            tokenStart = position
            var end = position
            while end < bytes.count && (bytes[end] | 0x20) >= UInt8(ascii: "a")
                && (bytes[end] | 0x20) <= UInt8(ascii: "z")
            {
                end += 1
            }
            guard end > position else { throw Failure(message: "expected a word at \(here)") }
            let word = String(decoding: bytes[position..<end], as: UTF8.self)
            position = end
            skipSpaces()
            return word
        }

        mutating func value() throws(Failure) -> Int {
            var end = position
            var value = 0
            while end < bytes.count && bytes[end] >= UInt8(ascii: "0") && bytes[end] <= UInt8(ascii: "9") {
                value = value * 10 + Int(bytes[end] - UInt8(ascii: "0"))
                guard value <= Condition.maxValue else {
                    throw Failure(
                        message: "the number at column \(position + 1) is too large (at most \(Condition.maxValue))")
                }
                end += 1
            }
            guard end > position else { throw Failure(message: "expected a number at \(here)") }
            position = end
            skipSpaces()
            return value
        }

        mutating func take(_ text: String) -> Bool {
            let expected = Array(text.utf8)
            guard bytes.count - position >= expected.count,
                Array(bytes[position..<(position + expected.count)]) == expected
            else {
                return false
            }
            position += expected.count
            skipSpaces()
            return true
        }

        mutating func relation() throws(Failure) -> Relation {
            let start = position
            let operand = try word()
            guard operand.count == 1, let letter = operand.first, "nivwftce".contains(letter) else {
                throw Failure(
                    message:
                        "expected an operand (n, i, v, w, f, t, c or e) at column \(start + 1), found \"\(operand)\"")
            }
            var modulus: Int?
            if take("%") {
                let value = try value()
                guard value > 0 else {
                    throw Failure(message: "\"% 0\" at column \(start + 1): the modulus must be 1 or more")
                }
                modulus = value
            }
            let equals: Bool
            if take("!=") {
                equals = false
            } else if take("=") {
                equals = true
            } else {
                throw Failure(message: "expected \"=\" or \"!=\" at \(here)")
            }
            var ranges: [ClosedRange<Int>] = []
            repeat {
                let low = try value()
                if take("..") {
                    let high = try value()
                    guard low <= high else { throw Failure(message: "the range \(low)..\(high) is empty") }
                    ranges.append(low...high)
                } else {
                    ranges.append(low...low)
                }
            } while take(",")
            return Relation(isNumber: letter == "n" || letter == "i", modulus: modulus, equals: equals, ranges: ranges)
        }
    }
}
