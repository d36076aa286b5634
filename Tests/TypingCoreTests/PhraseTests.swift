import Testing
import TypingCore

@Suite("Phrases in the built-in English table")
struct PhraseTests {
    static let names = ["A", "B", "C"]

    /// The phrase for `count` typers named A, B, C, ….
    static func text(_ count: Int, _ style: EngineConfiguration.Style) -> String {
        var bytes: [UInt8] = []
        guard count > 0 else { return "" }
        let table = PhraseTable.english
        table.appendClause(
            count: count, shown: Engine.shownNames(count: count, named: count, style: style),
            activity: .typing, names: .init(names), into: &bytes)
        table.appendEnd(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test(
        "group style",
        arguments: [
            (0, ""),
            (1, "A is typing..."),
            (2, "A and B are typing..."),
            (3, "A, B, and C are typing..."),
            (4, "A, B, and 2 others are typing..."),
            (100, "A, B, and 98 others are typing...")
        ])
    func group(count: Int, expected: String) {
        #expect(Self.text(count, .group) == expected)
    }

    @Test(
        "compact style",
        arguments: [
            (0, ""),
            (1, "A is typing..."),
            (2, "A and B are typing..."),
            (3, "A and 2 others are typing..."),
            (4, "A and 3 others are typing...")
        ])
    func compact(count: Int, expected: String) {
        #expect(Self.text(count, .compact) == expected)
    }
}
