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
