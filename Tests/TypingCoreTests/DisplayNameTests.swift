import Testing
import TypingCore

@Suite("Display names")
struct DisplayNameTests {
    @Test("the rules of Protocol.md#display-names; nil means unnamed", arguments: [
        (nil, nil),
        ("", nil),
        ("   \t ", nil),
        ("\u{7}\u{1B}\u{85}", nil),
        ("Someone", "Someone"),
        ("Alice", "Alice"),
        ("  Alice  ", "Alice"),
        ("Eve\u{7}\u{1B}[31m\n", "Eve[31m"),
        ("Al\u{0}ice", "Alice"),
        ("\u{A0}\u{3000}Bob\u{2003}", "Bob"),
        ("VeryLongName1234567", "VeryLongName123..."),
        ("123456789012345", "123456789012345"),
        ("1234567890123456", "123456789012345..."),
        ("Fourteen chars  xyz", "Fourteen chars..."),
        ("👩‍👩‍👧‍👦Family Émilie Ünïcødé!", "👩‍👩‍👧‍👦Family Émilie..."),
        ("🇫🇷🇩🇪🇮🇹🇪🇸🇵🇹🇬🇧🇮🇪🇳🇱🇧🇪🇱🇺🇩🇰🇸🇪🇳🇴🇫🇮🇮🇸🇵🇱", "🇫🇷🇩🇪🇮🇹🇪🇸🇵🇹🇬🇧🇮🇪🇳🇱🇧🇪🇱🇺🇩🇰🇸🇪🇳🇴🇫🇮🇮🇸..."),
        ("e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}", "e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}"),
        ("Z\u{35C}\u{361}\u{335}a\u{316}\u{317}l\u{318}g\u{319}o", "Z\u{35C}\u{361}\u{335}a\u{316}\u{317}l\u{318}g\u{319}o"),
        ("\u{202E}evil\u{202C}", "\u{202E}evil\u{202C}"),
    ] as [(String?, String?)])
    func rules(raw: String?, expected: String?) {
        let shown = DisplayName.render(raw)
        #expect(shown.map { Array($0.utf8) } == expected.map { Array($0.utf8) })
    }

    @Test("each control character is dropped wherever it stands; the characters beside the ranges are kept")
    func eachCharacter() {
        // One at a time, inside a short name: a long string of them is cut to 15
        // characters before most are reached (U+007F among them).
        for value in UInt32(0)...0xA0 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let control = value < 0x20 || (0x7F...0x9F).contains(value)
            let shown = DisplayName.render("a" + String(scalar) + "b")
            #expect(shown.map { Array($0.unicodeScalars) } == Array((control ? "ab" : "a" + String(scalar) + "b").unicodeScalars),
                    "U+\(String(value, radix: 16, uppercase: true))")
        }
    }

    @Test("the result never holds a control character")
    func noControls() {
        let raw = String(decoding: (0..<0xA0).map { UInt8($0) }.filter { $0 < 0x80 }, as: UTF8.self) + "\u{80}\u{9F}x"
        let shown = DisplayName.render(raw) ?? ""
        #expect(!shown.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
    }
}
