import Testing
import TypingCore

@Suite("Phrases")
struct PhraseTests {
    static let names = ["A", "B", "C"]

    @Test("group style", arguments: [
        (0, ""),
        (1, "A is typing..."),
        (2, "A and B are typing..."),
        (3, "A, B, and C are typing..."),
        (4, "A, B, and 2 others are typing..."),
        (100, "A, B, and 98 others are typing..."),
    ])
    func group(count: Int, expected: String) {
        #expect(Phrase.text(count: count, names: Array(Self.names.prefix(count)), style: .group) == expected)
    }

    @Test("compact style", arguments: [
        (0, ""),
        (1, "A is typing..."),
        (2, "A and B are typing..."),
        (3, "A and 2 others are typing..."),
        (4, "A and 3 others are typing..."),
    ])
    func compact(count: Int, expected: String) {
        #expect(Phrase.text(count: count, names: Array(Self.names.prefix(count)), style: .compact) == expected)
    }
}
