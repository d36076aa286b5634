import Testing
@testable import TypingCore

/// CLDR plural conditions for whole numbers (v3 §B).
@Suite("Plural rules")
struct PluralRulesTests {
    /// CLDR's cardinal rules for the languages typingd ships tables for.
    static let russian: [PluralCategory: String] = [
        .one: "v = 0 and i % 10 = 1 and i % 100 != 11 @integer 1, 21, 31",
        .few: "v = 0 and i % 10 = 2..4 and i % 100 != 12..14",
        .many: "v = 0 and i % 10 = 0 or v = 0 and i % 10 = 5..9 or v = 0 and i % 100 = 11..14",
    ]
    static let arabic: [PluralCategory: String] = [
        .zero: "n = 0", .one: "n = 1", .two: "n = 2", .few: "n % 100 = 3..10", .many: "n % 100 = 11..99",
    ]
    static let french: [PluralCategory: String] = [
        .one: "i = 0,1", .many: "e = 0 and i != 0 and i % 1000000 = 0 and v = 0 or e != 0..5",
    ]

    @Test("Russian: one, few, many by the last digits")
    func russian() throws {
        let rules = try PluralRules(Self.russian)
        let expected: [(Int, PluralCategory)] = [(0, .many), (1, .one), (2, .few), (4, .few), (5, .many), (11, .many),
                                                 (12, .many), (21, .one), (22, .few), (111, .many), (1001, .one)]
        for (count, category) in expected { #expect(rules.category(of: count) == category, "\(count)") }
    }

    @Test("Arabic: every category; French: one for 0 and 1, many for whole millions")
    func arabicAndFrench() throws {
        let arabic = try PluralRules(Self.arabic)
        #expect([0, 1, 2, 3, 10, 11, 99, 100, 102, 111].map(arabic.category(of:))
                == [.zero, .one, .two, .few, .few, .many, .many, .other, .other, .many])
        let french = try PluralRules(Self.french)
        #expect([0, 1, 2, 999_999, 1_000_000, 2_000_000].map(french.category(of:)) == [.one, .one, .other, .other, .many, .many])
        #expect(PluralRules.none.category(of: 1) == .other)
    }

    @Test("a condition that is not CLDR's syntax is refused, naming the category",
          arguments: [("", "empty"), ("@integer 1", "empty"), ("x = 1", "operand"), ("n % 0 = 1", "modulus"),
                      ("n = ", "number"), ("n == 1", "number"), ("n = 1 nor n = 2", "\"and\" or \"or\""),
                      ("n = 3..1", "empty"), ("n = 99999999999999", "too large"), ("n < 1", "\"=\"")])
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
