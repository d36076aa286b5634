import Testing
import TypingCore
@testable import TypingProtocol

/// The bytes of one encoded event, as text.
func encoded(_ event: Event) -> String {
    var encoder = EventEncoder()
    encoder.emit(event)
    return String(decoding: encoder.output.bytes, as: UTF8.self)
}

@Suite("Encoding events")
struct EncoderTests {
    @Test("every event, keys in the protocol's order, one line each")
    func keyOrder() {
        let view = IndicatorView(typing: [Identifier("a"), Identifier("b")], text: "A and B are typing...")
        #expect(encoded(.indicator(Indicator(at: 5, conv: Identifier("g"), viewer: Identifier("v"), view: view)))
                == #"{"event":"indicator","at":5,"conv":"g","viewer":"v","typing":["a","b"],"text":"A and B are typing..."}"# + "\n")
        #expect(encoded(.typing(TypingChange(at: 0, conv: Identifier("g"), user: Identifier("a"), state: .started)))
                == #"{"event":"typing","at":0,"conv":"g","user":"a","state":"started"}"# + "\n")
        #expect(encoded(.typing(TypingChange(at: 9, conv: Identifier("g"), user: Identifier("a"), state: .stopped, reason: .removed)))
                == #"{"event":"typing","at":9,"conv":"g","user":"a","state":"stopped","reason":"removed"}"# + "\n")
        #expect(encoded(.ok(Acknowledgement(line: 3, id: .integer(-3))))
                == #"{"event":"ok","line":3,"id":-3}"# + "\n")
        #expect(encoded(.error(ErrorReport(line: 2, id: .string("e"), code: .badJSON, message: "m", field: "f", column: 4)))
                == #"{"event":"error","line":2,"id":"e","code":"bad_json","message":"m","field":"f","column":4}"# + "\n")
        #expect(encoded(.error(ErrorReport(line: 2, code: .limit, message: "m")))
                == #"{"event":"error","line":2,"code":"limit","message":"m"}"# + "\n")
        #expect(encoded(.state(StateReply(at: 1, id: .string("q"), conv: Identifier("g"), members: [Identifier("a")], typing: [])))
                == #"{"event":"state","at":1,"id":"q","conv":"g","members":["a"],"typing":[]}"# + "\n")
        #expect(encoded(.stats(StatsReply(at: 1, id: nil, lines: 2, commands: 3, errors: 4, conversations: 5, members: 6, typing: 7, events: 8)))
                == #"{"event":"stats","at":1,"lines":2,"commands":3,"errors":4,"conversations":5,"members":6,"typing":7,"events":8}"# + "\n")
    }

    @Test("a typer's view, derived from the shared one, leaves out the right entry", arguments: [0, 1, 3])
    func derivedViews(omitted: Int) {
        let ids = ["a", "b\"q", "c", "d"].map(Identifier.init)
        let full = IndicatorView(typing: ids, text: "everyone")
        let derived = IndicatorView(base: full, omitting: omitted, bytes: full.entryBytes(omitted), text: Array("others".utf8))
        var expected = ids
        expected.remove(at: omitted)
        #expect(derived.typing == expected && derived.text == "others")
        #expect(derived == IndicatorView(typing: expected, text: "others"), "equal to the same view built directly")
        var encoder = EventEncoder()
        encoder.emit(.indicator(Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("v"), view: full)))
        encoder.emit(.indicator(Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("t"), view: derived)))
        let lines = String(decoding: encoder.output.bytes, as: UTF8.self).split(separator: "\n")
        let list = expected.map { id in id.string == "b\"q" ? #""b\"q""# : "\"\(id.string)\"" }.joined(separator: ",")
        #expect(lines.last == #"{"event":"indicator","at":1,"conv":"g","viewer":"t","typing":[\#(list)],"text":"others"}"#)
        var alone = EventEncoder()
        alone.emit(.indicator(Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("t"), view: derived)))
        #expect(String(decoding: alone.output.bytes, as: UTF8.self) == lines.last.map { $0 + "\n" },
                "the same without the shared view encoded first")
    }

    @Test("a step that writes more than the spill threshold hands output over as it goes")
    func spilling() {
        var encoder = EventEncoder()
        var spilled: [UInt8] = []
        var largest = 0
        encoder.spillThreshold = 1000
        encoder.spill = { spilled.append(contentsOf: $0) }
        let view = IndicatorView(typing: [Identifier("a")], text: "A is typing...")
        for n in 0..<500 {
            largest = max(largest, encoder.output.buffer.count)
            encoder.emit(.indicator(Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("v\(n)"), view: view)))
        }
        #expect(largest < 1200)
        spilled.append(contentsOf: encoder.output.bytes)
        #expect(String(decoding: spilled, as: UTF8.self).split(separator: "\n").count == 500)
    }

    @Test("strings escape quote, backslash and U+0000–U+001F only")
    func escaping() {
        var writer = JSONWriter()
        writer.string("q\"b\\s/\u{8}\u{C}\n\r\t\u{1}\u{1F}\u{7F}\u{85}é😀\u{2028}")
        #expect(String(decoding: writer.bytes, as: UTF8.self)
                == "\"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\u{7F}\u{85}é😀\u{2028}\"")
    }

    @Test("text needing an escape at any position of any length is escaped", arguments: Array(1...20))
    func escapeAnywhere(length: Int) {
        for position in 0..<length {
            for special: UInt8 in [0x22, 0x5C, 0x0A, 0x01, 0x1F] {
                var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                bytes[position] = special
                let writer = JSONWriter()
                bytes.withUnsafeBytes { writer.string(bytes: $0) }
                let text = String(decoding: writer.bytes, as: UTF8.self)
                #expect(text.count > length + 2, "length \(length), \(special) at \(position): \(text)")
            }
        }
        let plain = JSONWriter()
        Array("plain text, long enough for the word-at-a-time path: é ✓".utf8).withUnsafeBytes { plain.string(bytes: $0) }
        #expect(plain.bytes == Array("\"plain text, long enough for the word-at-a-time path: é ✓\"".utf8))
    }

    @Test("integers", arguments: [0, 7, 10, -1, 1234567890, 9_007_199_254_740_991, -9_007_199_254_740_991, Int.max, Int.min])
    func integers(value: Int) {
        var writer = JSONWriter()
        writer.integer(value)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == String(value))
    }

    @Test("a shared view is encoded once and reused for the next viewer")
    func viewCache() {
        let view = IndicatorView(typing: [Identifier("a")], text: "A is typing...")
        var encoder = EventEncoder()
        encoder.emit(.indicator(Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("b"), view: view)))
        encoder.emit(.indicator(Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("c"), view: view)))
        let other = IndicatorView(typing: [], text: "")
        encoder.emit(.indicator(Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("a"), view: other)))
        #expect(String(decoding: encoder.output.bytes, as: UTF8.self) == """
        {"event":"indicator","at":1,"conv":"g","viewer":"b","typing":["a"],"text":"A is typing..."}
        {"event":"indicator","at":1,"conv":"g","viewer":"c","typing":["a"],"text":"A is typing..."}
        {"event":"indicator","at":1,"conv":"g","viewer":"a","typing":[],"text":""}

        """)
    }
}
