import Testing
import TypingCore
import TypingProtocol

/// The bytes of events encoded one after the other by one format, as text.
func encoded(_ events: Event...) -> String {
    var format = JSONFormat()
    var buffer = OutputBuffer()
    for event in events { format.encode(event, into: &buffer) }
    return String(decoding: buffer.bytes, as: UTF8.self)
}

/// What `body` writes into a buffer, as text.
func written(_ body: (inout OutputBuffer) -> Void) -> String {
    var buffer = OutputBuffer()
    body(&buffer)
    return String(decoding: buffer.bytes, as: UTF8.self)
}

@Suite("Encoding events")
struct EncoderTests {
    @Test("every event, keys in the protocol's order, one line each")
    func keyOrder() {
        let view = IndicatorView(typing: [Identifier("a"), Identifier("b")], text: "A and B are typing...")
        #expect(
            encoded(.indicator(Event.Indicator(at: 5, conv: Identifier("g"), viewer: Identifier("v"), view: view)))
                == #"{"event":"indicator","at":5,"conv":"g","viewer":"v","typing":["a","b"],"text":"A and B are typing..."}"#
                + "\n")
        #expect(
            encoded(.typing(Event.Typing(at: 0, conv: Identifier("g"), user: Identifier("a"), state: .started)))
                == #"{"event":"typing","at":0,"conv":"g","user":"a","state":"started"}"# + "\n")
        #expect(
            encoded(
                .typing(
                    Event.Typing(at: 9, conv: Identifier("g"), user: Identifier("a"), state: .stopped, reason: .removed)
                ))
                == #"{"event":"typing","at":9,"conv":"g","user":"a","state":"stopped","reason":"removed"}"# + "\n")
        #expect(
            encoded(.ok(Event.OK(line: 3, id: .integer(-3))))
                == #"{"event":"ok","line":3,"id":-3}"# + "\n")
        #expect(
            encoded(.error(Event.Error(line: 2, id: .string("e"), code: .badJSON, message: "m", field: "f", column: 4)))
                == #"{"event":"error","line":2,"id":"e","code":"bad_json","message":"m","field":"f","column":4}"# + "\n"
        )
        #expect(
            encoded(
                .member(
                    Event.Member(
                        at: 7, conv: Identifier("g"), user: Identifier("a"), name: nil, sendTyping: true,
                        open: false, side: Identifier("t"),
                        announcement: .init(announced: "B is \"typing\""),
                        sideAnnouncement: .init(due: 1007, rank: 2, announced: "C"))))
                == #"{"event":"member","at":7,"conv":"g","user":"a","send_typing":true,"open":false,"side":"t","announced":"B is \"typing\"","side_announce_at":1007,"side_announce_rank":2,"side_announced":"C"}"#
                + "\n")
        #expect(
            encoded(.error(Event.Error(line: 2, code: .limit, message: "m")))
                == #"{"event":"error","line":2,"code":"limit","message":"m"}"# + "\n")
        #expect(
            encoded(
                .state(
                    Event.State(
                        at: 1, id: .string("q"), conv: Identifier("g"), members: [Identifier("a")],
                        open: [Identifier("a")], typing: [])))
                == #"{"event":"state","at":1,"id":"q","conv":"g","members":["a"],"open":["a"],"typing":[]}"# + "\n")
        #expect(
            encoded(
                .indicator(
                    Event.Indicator(
                        at: 5, conv: Identifier("g"), viewer: Identifier("v"),
                        view: IndicatorView(typing: [Identifier("a")], more: 2, text: "t"))))
                == #"{"event":"indicator","at":5,"conv":"g","viewer":"v","typing":["a"],"more":2,"text":"t"}"# + "\n")
        #expect(
            encoded(
                .stats(
                    Event.Stats(
                        at: 1, id: nil, lines: 2, commands: 3, errors: 4, conversations: 5, members: 6, typing: 7,
                        events: 8)))
                == #"{"event":"stats","at":1,"lines":2,"commands":3,"errors":4,"conversations":5,"members":6,"typing":7,"events":8}"#
                + "\n")
    }

    @Test("a typer's view, derived from the shared one, leaves out the right entry", arguments: [0, 1, 3])
    func derivedViews(omitted: Int) {
        let ids = ["a", "b\"q", "c", "d"].map(Identifier.init)
        let full = IndicatorView(typing: ids, text: "everyone")
        let derived = IndicatorView(base: full, omitting: omitted, listed: 3, more: 0, text: Array("others".utf8))
        var expected = ids
        expected.remove(at: omitted)
        #expect(derived.typing == expected && derived.text == "others")
        #expect(derived == IndicatorView(typing: expected, text: "others"), "equal to the same view built directly")
        let lines = encoded(
            .indicator(Event.Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("v"), view: full)),
            .indicator(Event.Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("t"), view: derived))
        )
        .split(separator: "\n")
        let list = expected.map { id in id.string == "b\"q" ? #""b\"q""# : "\"\(id.string)\"" }.joined(separator: ",")
        #expect(
            lines.last == #"{"event":"indicator","at":1,"conv":"g","viewer":"t","typing":[\#(list)],"text":"others"}"#)
        #expect(
            encoded(.indicator(Event.Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("t"), view: derived)))
                == lines.last.map { $0 + "\n" }, "the same without the shared view encoded first")
    }

    @Test("strings escape quote, backslash, U+0000–U+001F, U+007F–U+009F, U+2028 and U+2029, nothing else")
    func escaping() {
        #expect(
            written { $0.jsonString("q\"b\\s/\u{8}\u{C}\n\r\t\u{1}\u{1F}\u{7F}\u{85}é😀\u{2028}") }
                == #""q\"b\\s/\b\f\n\r\t\u0001\u001f\u007f\u0085é😀\u2028""#)
        // Lead bytes of escaped characters, next to ones that are not escaped.
        #expect(
            written { $0.jsonString("\u{9F}\u{A0}©\u{2027}\u{2028}\u{2029}\u{202A}…€\u{80}") }
                == #""\u009f\#u{A0}©\#u{2027}\u2028\u2029\#u{202A}…€\u0080""#)
    }

    @Test("text needing an escape at any position of any length is escaped", arguments: Array(1...20))
    func escapeAnywhere(length: Int) {
        // Each byte that needs an escape, and the escape the protocol writes for it.
        let escapes: [(UInt8, String)] = [
            (0x22, #"\""#), (0x5C, #"\\"#), (0x0A, #"\n"#), (0x01, #"\u0001"#), (0x1F, #"\u001f"#)
        ]
        for position in 0..<length {
            for (special, escape) in escapes {
                var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                bytes[position] = special
                let text = written { out in bytes.withUnsafeBytes { out.jsonString($0) } }
                let expected =
                    "\"" + String(repeating: "x", count: position) + escape
                    + String(repeating: "x", count: length - position - 1) + "\""
                #expect(text == expected, "length \(length), \(special) at \(position)")
            }
        }
        #expect(
            written { $0.jsonString("plain text, long enough for the word-at-a-time path: é ✓") }
                == "\"plain text, long enough for the word-at-a-time path: é ✓\"")
    }

    @Test(
        "integers",
        arguments: [0, 7, 10, -1, 1234567890, 9_007_199_254_740_991, -9_007_199_254_740_991, Int.max, Int.min])
    func integers(value: Int) {
        #expect(written { $0.appendDecimal(value) } == String(value))
    }

    @Test(
        "a shared view is encoded once, however many viewers get it, in whatever order its variants come; another view is encoded anew"
    )
    func viewCacheCounts() {
        let view = IndicatorView(typing: [Identifier("a")], text: "A is typing...")
        let other = IndicatorView(typing: [], text: "")
        // Variants of `view` (other tables): the same ids, their own phrase.
        let variants = (0..<4).map {
            IndicatorView(base: view, omitting: -1, listed: 1, more: 0, text: Array("A tippt \($0)".utf8))
        }
        var format = JSONFormat()
        var buffer = OutputBuffer()
        for viewer in 0..<1000 {
            format.encode(
                .indicator(Event.Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("v\(viewer)"), view: view)),
                into: &buffer)
        }
        #expect(format.tailEncodings == 1)
        format.encode(
            .indicator(Event.Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("a"), view: other)),
            into: &buffer)
        #expect(format.tailEncodings == 2)
        // Viewers of four languages, interleaved: each variant once.
        for viewer in 0..<400 {
            format.encode(
                .indicator(
                    Event.Indicator(
                        at: 1, conv: Identifier("g"), viewer: Identifier("w\(viewer)"),
                        view: viewer % 5 == 4 ? view : variants[viewer % 5])), into: &buffer)
        }
        #expect(format.tailEncodings == 6)
        // More shared views than the cache keeps: the oldest is encoded anew.
        for round in 0..<JSONFormat.cachedTails {
            format.encode(
                .indicator(
                    Event.Indicator(
                        at: 1, conv: Identifier("g"), viewer: Identifier("x"),
                        view: IndicatorView(typing: [], text: "\(round)"))), into: &buffer)
        }
        let before = format.tailEncodings
        format.encode(
            .indicator(Event.Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("b"), view: view)),
            into: &buffer)
        #expect(format.tailEncodings == before + 1)
    }

    @Test("a shared view's cached tail gives the same bytes to each viewer")
    func viewCache() {
        let view = IndicatorView(typing: [Identifier("a")], text: "A is typing...")
        let other = IndicatorView(typing: [], text: "")
        #expect(
            encoded(
                .indicator(Event.Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("b"), view: view)),
                .indicator(Event.Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("c"), view: view)),
                .indicator(Event.Indicator(at: 1, conv: Identifier("g"), viewer: Identifier("a"), view: other))) == """
                    {"event":"indicator","at":1,"conv":"g","viewer":"b","typing":["a"],"text":"A is typing..."}
                    {"event":"indicator","at":1,"conv":"g","viewer":"c","typing":["a"],"text":"A is typing..."}
                    {"event":"indicator","at":1,"conv":"g","viewer":"a","typing":[],"text":""}

                    """)
    }
}
