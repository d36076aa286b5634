import Testing
import TypingCore

@Suite("Indicator views")
struct IndicatorViewTests {
    @Test("ids and text round-trip through the packed form, escape flags included")
    func roundTrip() {
        let ids = [
            Identifier("a"), Identifier(String(repeating: "long", count: 20)), Identifier("q\"x"), Identifier("é")
        ]
        let view = IndicatorView(typing: ids, text: "a, b, and 2 others are typing...")
        #expect(view.typing == ids && view.typerCount == 4)
        #expect(view.text == "a, b, and 2 others are typing...")
        var flags: [Bool] = []
        view.forEachTyper { _, escapes in flags.append(escapes) }
        #expect(flags == [false, false, true, false])
    }

    @Test(
        "ids of any length pack and unpack (the protocol's 256 bytes is the decoder's limit, not the engine's)",
        arguments: [0, 255, 256, 32_767, 32_768, 40_000, 65_536, 1 << 20])
    func longIDs(length: Int) {
        let long = Identifier(String(repeating: "x", count: max(length - 1, 0)) + (length > 0 ? "\"" : ""))
        let view = IndicatorView(typing: [Identifier("a"), long, Identifier("b")], text: "t")
        #expect(view.typing == [Identifier("a"), long, Identifier("b")])
        var flags: [Bool] = []
        view.forEachTyper { _, escapes in flags.append(escapes) }
        #expect(flags == [false, length > 0, false])
    }

    @Test("views are equal exactly when ids and text are")
    func equality() {
        let a = IndicatorView(typing: [Identifier("ab"), Identifier("c")], text: "t")
        #expect(a == IndicatorView(typing: [Identifier("ab"), Identifier("c")], text: "t"))
        #expect(a != IndicatorView(typing: [Identifier("a"), Identifier("bc")], text: "t"), "boundaries count")
        #expect(a != IndicatorView(typing: [Identifier("ab"), Identifier("c")], text: "u"))
        #expect(a != IndicatorView(typing: [Identifier("ab")], text: "ct"))
        #expect(IndicatorView.empty == IndicatorView(typing: [], text: ""))
    }
}
