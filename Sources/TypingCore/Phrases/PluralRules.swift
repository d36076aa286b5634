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

/// A language's cardinal plural rules, in CLDR's syntax, for whole numbers (v3 §B):
/// a count's category is the first of `zero`, `one`, `two`, `few`, `many` whose
/// condition holds, else `other`.
///
/// A condition is `and ('or' and)*`; `and` is `relation ('and' relation)*`; a
/// relation is `operand ('%' value)? ('=' | '!=') range (',' range)*`, a range being
/// `value` or `value..value`; the operands are `n i v w f t c e`. For a whole number
/// n, the operands `n` and `i` are n and every other operand is 0. Anything from `@`
/// on (CLDR's samples) is ignored, and spaces between tokens are free.
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
    /// The parsed conditions, in category order.
    private let conditions: [(category: PluralCategory, condition: Condition)]
    /// The categories of 0 ..< 128, worked out once.
    private let small: [PluralCategory]

    /// Rules with no condition: every count is `other` (Japanese, Chinese, …).
    public static let none = PluralRules(parsed: [:], conditions: [])

    /// Parses `conditions`, keyed by category; a condition for `other` is ignored.
    public init(_ conditions: [PluralCategory: String]) throws(Error) {
        var parsed: [(PluralCategory, Condition)] = []
        for category in PluralCategory.allCases where category != .other {
            guard let source = conditions[category] else { continue }
            do {
                parsed.append((category, try Condition(parsing: source)))
            } catch {
                throw Error(category: category.rawValue, message: error.message)
            }
        }
        var sources = conditions
        sources[.other] = nil
        self.init(parsed: sources, conditions: parsed)
    }

    private init(parsed sources: [PluralCategory: String], conditions: [(category: PluralCategory, condition: Condition)]) {
        self.sources = sources
        self.conditions = conditions
        self.small = (0..<128).map { PluralRules.evaluate(conditions, $0) }
    }

    /// The category of the whole number `count` (0 or more).
    @inline(__always)
    public func category(of count: Int) -> PluralCategory {
        count >= 0 && count < small.count ? small[count] : PluralRules.evaluate(conditions, count)
    }

    private static func evaluate(_ conditions: [(category: PluralCategory, condition: Condition)], _ count: Int) -> PluralCategory {
        for (category, condition) in conditions where condition.holds(for: count) { return category }
        return .other
    }

    /// Equal when they were made from the same conditions.
    public static func == (lhs: PluralRules, rhs: PluralRules) -> Bool { lhs.sources == rhs.sources }
}

/// One parsed condition: relations joined by `and`, those joined by `or`.
private struct Condition: Sendable {
    struct Relation: Sendable {
        /// True for `n` and `i` (the number itself); false for the operands that are 0.
        var isNumber: Bool
        var modulus: Int?
        var equals: Bool
        var ranges: [ClosedRange<Int>]

        func holds(for count: Int) -> Bool {
            var value = isNumber ? count : 0
            if let modulus { value %= modulus }
            let inRange = ranges.contains { $0.contains(value) }
            return inRange == equals
        }
    }

    /// `or` of `and`s.
    var alternatives: [[Relation]]

    func holds(for count: Int) -> Bool {
        alternatives.contains { relations in relations.allSatisfy { $0.holds(for: count) } }
    }

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
                throw Failure(message: "expected \"and\" or \"or\" at column \(scanner.column(of: word)), found \"\(word)\"")
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
            while end < bytes.count && (bytes[end] | 0x20) >= UInt8(ascii: "a") && (bytes[end] | 0x20) <= UInt8(ascii: "z") {
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
                    throw Failure(message: "the number at column \(position + 1) is too large (at most \(Condition.maxValue))")
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
            guard bytes.count - position >= expected.count, Array(bytes[position..<(position + expected.count)]) == expected else {
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
                throw Failure(message: "expected an operand (n, i, v, w, f, t, c or e) at column \(start + 1), found \"\(operand)\"")
            }
            var modulus: Int?
            if take("%") {
                let value = try value()
                guard value > 0 else { throw Failure(message: "\"% 0\" at column \(start + 1): the modulus must be 1 or more") }
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
