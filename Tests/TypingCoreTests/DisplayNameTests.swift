import Testing
import TypingCore
import TypingTestSupport

@Suite("Display names")
struct DisplayNameTests {
    @Test(
        "the rules of Protocol.md#display-names; nil means unnamed",
        arguments: [
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
            (
                "e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}",
                "e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}"
            ),
            (
                "Z\u{35C}\u{361}\u{335}a\u{316}\u{317}l\u{318}g\u{319}o",
                "Z\u{35C}\u{361}\u{335}a\u{316}\u{317}l\u{318}g\u{319}o"
            ),
            ("\u{202E}evil\u{202C}", "\u{202E}evil\u{202C}")
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
            #expect(
                shown.map { Array($0.unicodeScalars) }
                    == Array((control ? "ab" : "a" + String(scalar) + "b").unicodeScalars),
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

/// `DisplayName.clean` against the rules written the plain way (scalar by scalar,
/// whole strings, the way it was written before it was made to cost one scan of
/// the bytes): the same display name and the same "as given" on names built from
/// the pieces the rules care about, short and long.
@Suite("Display names against a reference model")
struct DisplayNameModelTests {
    static func reference(_ raw: String) -> (display: String?, asGiven: Bool) {
        let all = Array(raw.unicodeScalars)
        var scalars = all.filter { !DisplayName.isControl($0) }
        var changed = scalars.count != all.count
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst(); changed = true }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast(); changed = true }
        if scalars.isEmpty { return (nil, false) }
        var cleaned = ""
        cleaned.unicodeScalars.append(contentsOf: scalars)
        guard cleaned.count > DisplayName.maxClusters else { return (cleaned, !changed) }
        var kept = Array(String(cleaned.prefix(DisplayName.maxClusters)).unicodeScalars)
        while let last = kept.last, last.properties.isWhitespace { kept.removeLast() }
        var shown = ""
        shown.unicodeScalars.append(contentsOf: kept)
        return (shown + DisplayName.ellipsis, false)
    }

    /// Pieces: ASCII, white space of several kinds, C0, DEL and C1 controls, the
    /// scalars just outside their ranges, combining marks (which join the cluster
    /// before them), emoji with ZWJ, flags, CR LF (one cluster), 2-, 3- and 4-byte UTF-8.
    static let pieces: [String] = [
        "a", "Z", "7", " ", "\t", "\n", "\r\n", "\u{0}", "\u{1F}", "\u{7F}", "\u{80}", "\u{9F}", "\u{A0}", "\u{A1}",
        "\u{85}", "\u{2003}", "\u{3000}", "\u{301}", "\u{35C}", "é", "ß", "日", "👩‍👩‍👧", "🇫🇷", "\u{200D}", "\u{FE0F}",
        "\u{202E}", "\u{10FFFF}", "\u{C2}", "\u{1F600}"
    ]

    @Test("the same result as the reference on 40,000 random names of 0 to 60 pieces, and on names of 2,000")
    func againstReference() {
        var rng = SplitMix64(seed: 0xD15C)
        for round in 0..<40_000 {
            let count = round % 500 == 0 ? 2_000 : rng.below(61)
            var raw = ""
            for _ in 0..<count { raw += Self.pieces[rng.below(Self.pieces.count)] }
            let got = DisplayName.clean(raw)
            let want = Self.reference(raw)
            #expect(
                got.display.map { Array($0.utf8) } == want.display.map { Array($0.utf8) },
                "\(Array(raw.unicodeScalars).map(\.value))")
            #expect(got.asGiven == want.asGiven, "\(Array(raw.unicodeScalars).map(\.value))")
            if got.display.map({ Array($0.utf8) }) != want.display.map({ Array($0.utf8) })
                || got.asGiven != want.asGiven
            {
                return
            }
        }
    }
}
