import CJansson
import CJanssonArena
import Testing
import TypingCore
import TypingPartitioning
import TypingProtocol
import TypingTestSupport

/// Attacks on the quick reading of a line (`PlainLine`): every byte of a few
/// plain lines changed to each of the 256 values, each byte value inserted at
/// every position, each byte dropped, interesting sequences (bad UTF-8, escapes,
/// literals, numbers) inserted everywhere, and token soup. Whenever the quick
/// reading is sure, jansson must read the same object; the route of every line
/// must be jansson's.
@Suite("Routing a line, attacked")
struct LineRouteAttackTests {
    /// Plain lines with every kind of value the quick reading takes.
    static let seeds: [String] = [
        #"{"cmd":"join","conv":"general","user":"ana","id":"j1"}"#,
        #"{"cmd":"type","conv":"dm:a:b","user":"x","at":-0,"id":7}"#,
        #"{ "cmd" : "send" , "conv" : "é😀", "at" : true , "x":null }"#,
        "\t{\"conv\":\"\",\"cmd\":\"query\",\"n\":123456789012345678,\"f\":false}\t",
        #"{"id":"typingd:x","cmd":"forget","conv":"c","user":"u","":0}"#,
        #"{"cmd":"open","conv":"c","at":1,"thread":"t","view":"list"}"#,
        #"{"cmd":"tick","at":5}"#,
        #"{"cmd":"offline","user":"u","conv":"c"}"#,
        #"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"cmd":"leave","conv":"c","m":-1}"#
    ]

    /// Byte sequences worth inserting anywhere.
    static let pieces: [[UInt8]] = {
        var out: [[UInt8]] = [
            [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF],
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF], [0xEF, 0xBB, 0xBF],
            [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xC2], [0xE2, 0x82],
            [0xF0, 0x9F, 0x98], [0x80], [0xBF], [0xC2, 0xC2], [0xE2, 0x28, 0xA1]
        ]
        let texts = [
            "true", "false", "null", "truex", "nullnull", "true1", "tru", "nul", "fals", "TRUE", "0", "-0", "-", "01",
            "00",
            "-01", "1.", ".5", "1.5", "1e5", "1E5", "1e", "0x1", "123456789012345678", "1234567890123456789",
            "12345678901234567890", "-123456789012345678", "-9223372036854775808", "9223372036854775807",
            "9223372036854775808", "\"\"", "\"a\"", "\\", "\\\"", "\\u0000", "\\u0061", "\\ud800", "\"at\":1,",
            "\"at\":null,", "\"cmd\":\"join\",", "\"conv\":\"x\",", "\"id\":\"typingd:\",", "\"\":1,", "[]", "{}",
            "[1]",
            "{\"a\":1}", ",", ":", "{", "}", "\"", " ", "\t", "\r", "\n", "\r\n", "\u{7F}", "\u{85}", "\u{A0}",
            "\u{2028}",
            "\u{FEFF}", "NaN", "Infinity", "//", "/*", "'"
        ]
        out += texts.map { Array($0.utf8) }
        return out
    }()

    /// What jansson reads of `line` when the quick reading is sure of it.
    struct Fields: Equatable {
        var cmd: [UInt8]?
        var conv: [UInt8]?
        var id: [UInt8]?
        var hasAt: Bool
    }

    static func quick(_ bytes: UnsafeRawBufferPointer) -> Fields? {
        guard let plain = PlainLine(bytes) else { return nil }
        func text(_ range: Range<Int>?) -> [UInt8]? { range.map { Array(bytes[$0]) } }
        return Fields(cmd: text(plain.cmd), conv: text(plain.conv), id: text(plain.id), hasAt: plain.hasAt)
    }

    /// jansson's reading (the decoder's flags): nil when it refuses the line or it is no object.
    static func jansson(_ bytes: UnsafeRawBufferPointer) -> Fields? {
        guard let base = bytes.baseAddress, !bytes.contains(0) else { return nil }
        var error = json_error_t()
        guard let root = json_loadb(base.assumingMemoryBound(to: CChar.self), bytes.count, cj_decode_flags(), &error)
        else {
            return nil
        }
        defer { json_decref(root) }
        guard cj_is_object(root) != 0 else { return nil }
        func text(_ key: String) -> [UInt8]? {
            guard let value = json_object_get(root, key), cj_is_string(value) != 0 else { return nil }
            guard let start = json_string_value(value) else { return [] }
            return Array(UnsafeRawBufferPointer(start: start, count: json_string_length(value)))
        }
        return Fields(cmd: text("cmd"), conv: text("conv"), id: text("id"), hasAt: json_object_get(root, "at") != nil)
    }

    /// The line for a message: its text and, for bad UTF-8, its bytes (the first 120).
    static func show(_ line: [UInt8]) -> String {
        let text = String(decoding: line.prefix(120), as: UTF8.self).debugDescription
        return String(validating: line, as: UTF8.self) == nil ? "\(text) \(Array(line.prefix(120)))" : text
    }

    /// Checks one line; returns a description of a disagreement, if any.
    static func check(_ line: [UInt8], sure: inout Int) -> String? {
        line.withUnsafeBytes { bytes -> String? in
            if let quick = quick(bytes) {
                sure += 1
                let slow = jansson(bytes)
                if quick != slow {
                    return "\(show(line)): quick \(quick) jansson \(String(describing: slow))"
                }
            }
            for count in [4, 7] {
                let fast = Partition.route(line: bytes, among: count),
                    slow = Partition.decodedRoute(line: bytes, among: count)
                if fast != slow {
                    return "\(show(line)) among \(count): \(fast) against \(slow)"
                }
            }
            return nil
        }
    }

    static func run(_ lines: some Sequence<[UInt8]>) -> (count: Int, sure: Int, bad: [String]) {
        var count = 0, sure = 0, bad: [String] = []
        for line in lines {
            count += 1
            if let problem = check(line, sure: &sure), bad.count < 3 { bad.append(problem) }
        }
        return (count, sure, bad)
    }

    @Test("every byte value at every position of plain lines, replaced, inserted; every byte dropped")
    func everyByteEverywhere() {
        var lines: [[UInt8]] = []
        for seed in Self.seeds {
            let line = Array(seed.utf8)
            lines.append(line)
            for position in 0...line.count {
                if position < line.count {
                    var dropped = line
                    dropped.remove(at: position)
                    lines.append(dropped)
                    lines.append(Array(line[..<position]))
                }
                for byte in 0...255 {
                    if position < line.count, line[position] != UInt8(byte) {
                        var changed = line
                        changed[position] = UInt8(byte)
                        lines.append(changed)
                    }
                    var inserted = line
                    inserted.insert(UInt8(byte), at: position)
                    lines.append(inserted)
                }
            }
        }
        let result = Self.run(lines)
        print("every byte: \(result.count) lines, \(result.sure) read quickly")
        #expect(result.bad.isEmpty, "\(result.bad.joined(separator: "\n"))")
    }

    @Test("interesting sequences inserted at every position, or replacing each token's bytes")
    func piecesEverywhere() {
        var lines: [[UInt8]] = []
        for seed in Self.seeds {
            let line = Array(seed.utf8)
            for position in 0...line.count {
                for piece in Self.pieces {
                    var inserted = line
                    inserted.insert(contentsOf: piece, at: position)
                    lines.append(inserted)
                    // The piece in place of the bytes it covers.
                    if position + piece.count <= line.count {
                        var over = line
                        over.replaceSubrange(position..<(position + piece.count), with: piece)
                        lines.append(over)
                    }
                }
            }
        }
        let result = Self.run(lines)
        print("pieces: \(result.count) lines, \(result.sure) read quickly")
        #expect(result.bad.isEmpty, "\(result.bad.joined(separator: "\n"))")
    }

    @Test("values of a conversation command's fields, each from a long list")
    func valuesOfFields() {
        let values = [
            "\"general\"", "\"\"", "0", "-0", "-", "01", "1.", ".5", "1e3", "-1", "123456789012345678",
            "1234567890123456789", "-1234567890123456789", "99999999999999999999", "true", "false", "null",
            "truex", "nullnull", "true1", "null0", "[]", "{}", "\"\\u0000\"", "\"a\\\"\"", "\"\u{7F}\"",
            "\"\u{1}\"", "\"typingd:x\"", "\"typingd\"", "tRue", "- 1", "+1", "0e", "0.0", "-0.0", "1E+2"
        ]
        var lines: [[UInt8]] = []
        let keys = ["cmd", "conv", "id", "at", "user", "", "x"]
        for first in keys {
            for firstValue in values {
                for second in keys {
                    for secondValue in ["\"join\"", "\"c\"", "1", "null", "\"\u{E9}\""] {
                        for layout in 0..<4 {
                            let a = "\"\(first)\":\(firstValue)", b = "\"\(second)\":\(secondValue)"
                            let text =
                                switch layout {
                                case 0: "{\"cmd\":\"type\",\"conv\":\"c\",\(a),\(b)}"
                                case 1: "{\(a),\"cmd\":\"send\",\(b),\"conv\":\"c\"}"
                                case 2: "{\(b) , \(a)}"
                                default: " {\"conv\":\"c\",\(a),\"cmd\":\"query\",\(b)} "
                                }
                            lines.append(Array(text.utf8))
                        }
                    }
                }
            }
        }
        // More than 16 keys, every count around the limit.
        for count in 12...20 {
            for place in 0..<count {
                var fields = (0..<count).map { "\"k\($0)\":\($0)" }
                fields[place] = "\"cmd\":\"join\""
                fields[(place + 1) % count] = "\"conv\":\"c\""
                lines.append(Array(("{" + fields.joined(separator: ",") + "}").utf8))
                fields[(place + 2) % count] = "\"cmd\":\"join\"" // a key twice
                lines.append(Array(("{" + fields.joined(separator: ",") + "}").utf8))
            }
        }
        // Very long lines.
        let long = String(repeating: "x", count: 100_000)
        lines.append(Array("{\"cmd\":\"join\",\"conv\":\"\(long)\"}".utf8))
        lines.append(Array("{\"cmd\":\"join\",\"conv\":\"c\",\"user\":\"\(long)\"}".utf8))
        lines.append(Array("{\"cmd\":\"join\",\"conv\":\"c\",\"\(long)\":1}".utf8))
        lines.append(Array(("{\"cmd\":\"join\",\"conv\":\"c\"" + String(repeating: " ", count: 100_000) + "}").utf8))
        let result = Self.run(lines)
        print("fields: \(result.count) lines, \(result.sure) read quickly")
        #expect(result.bad.isEmpty, "\(result.bad.joined(separator: "\n"))")
    }

    @Test("token soup: random sequences of JSON tokens and damage", arguments: [11, 12] as [UInt64])
    func tokenSoup(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let tokens = [
            "{", "}", ",", ":", " ", "\t", "\"cmd\"", "\"conv\"", "\"id\"", "\"at\"", "\"join\"", "\"type\"",
            "\"tick\"",
            "\"c\"", "\"\"", "1", "-0", "true", "null", "false", "[", "]", "\"\u{E9}\"", "\"a\\u0062\"", "0", "01"
        ]
        var lines: [[UInt8]] = []
        for _ in 0..<60_000 {
            var line: [UInt8] = []
            // Mostly well-formed objects: { key : value (, key : value)* }.
            if random.below(3) != 0 {
                line += Array("{\"cmd\":\"join\",\"conv\":\"c\"".utf8)
                for _ in 0..<random.below(4) {
                    line +=
                        Array(",".utf8) + Array(tokens[6 + random.below(4)].utf8) + [0x3A]
                        + Array(tokens[10 + random.below(16)].utf8)
                }
                line.append(0x7D)
            }
            for _ in 0..<random.below(4) {
                let at = random.below(line.count + 1)
                if random.below(2) == 0 {
                    line.insert(contentsOf: Array(tokens[random.below(tokens.count)].utf8), at: at)
                } else {
                    line.insert(contentsOf: Self.pieces[random.below(Self.pieces.count)], at: at)
                }
            }
            lines.append(line)
        }
        let result = Self.run(lines)
        print("soup: \(result.count) lines, \(result.sure) read quickly")
        #expect(result.bad.isEmpty, "\(result.bad.joined(separator: "\n"))")
    }

    @Test("jansson, with the decoder's flags, does what the quick reading assumes")
    func janssonAsAssumed() {
        func reads(_ text: String) -> Bool { Array(text.utf8).withUnsafeBytes { Self.jansson($0) != nil } }
        func scalar(_ text: String) -> Bool {
            Array(text.utf8).withUnsafeBytes { bytes in
                var error = json_error_t()
                guard
                    let root = json_loadb(
                        bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count, cj_decode_flags(), &error)
                else { return false }
                json_decref(root)
                return true
            }
        }
        // JSON_REJECT_DUPLICATES: a key twice, also when one of them is escaped.
        #expect(!reads(#"{"a":1,"a":2}"#))
        #expect(!reads(#"{"cmd":"join","c\u006dd":"type","conv":"c"}"#))
        #expect(reads(#"{"a":{"b":1},"b":{"a":1}}"#))
        // JSON_DECODE_ANY: a scalar is a document (the decoder then says not_object).
        #expect(scalar("5") && scalar("\"x\"") && scalar("null") && scalar(" true "))
        // jansson's spaces are also CR and LF; the quick reading leaves those to it.
        #expect(reads("{\"a\":1}\r") && reads("\r\n{\"a\":\r1}\n"))
        #expect(!reads("{\"a\":1}x") && !reads("{\"a\":1}{}") && !reads("\u{FEFF}{\"a\":1}"))
        // Strings: control bytes, \u0000, bad UTF-8 refused; DEL and noncharacters taken.
        #expect(!reads("{\"a\":\"\u{1F}\"}") && !reads(#"{"a":"\u0000"}"#) && !reads(#"{"\u0000":1}"#))
        #expect(reads("{\"a\":\"\u{7F}\u{FFFF}\u{10FFFF}\"}"))
        for bad: [UInt8] in [
            [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xF0, 0x8F, 0xBF, 0xBF],
            [0xC3]
        ] {
            let line = Array("{\"a\":\"".utf8) + bad + Array("\"}".utf8)
            #expect(line.withUnsafeBytes { Self.jansson($0) } == nil, "\(bad)")
        }
        // Numbers: 18 digits always fit; -0 is an integer; leading zeros, a bare minus, overflow refused.
        #expect(reads(#"{"a":-0,"b":999999999999999999,"c":-999999999999999999}"#))
        #expect(reads(#"{"a":9223372036854775807}"#) && !reads(#"{"a":9223372036854775808}"#))
        #expect(!reads(#"{"a":01}"#) && !reads(#"{"a":-}"#) && !reads(#"{"a":1.}"#) && !reads(#"{"a":.5}"#))
        // A word is read whole.
        #expect(!reads(#"{"a":truex}"#) && !reads(#"{"a":true1}"#) && !reads(#"{"a":nullnull}"#))
        // More keys than the quick reading counts, and the empty key.
        #expect(reads("{" + (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + ",\"\":0}"))
    }

    @Test("random bytes never crash the route")
    func randomBytes() {
        var random = SplitMix64(seed: 99)
        var routed = 0
        for _ in 0..<50_000 {
            var line = (0..<random.below(40)).map { _ in UInt8(random.below(256)) }
            if random.below(2) == 0 { line = Array("{\"cmd\":\"join\",\"conv\":\"".utf8) + line }
            line.withUnsafeBytes { bytes in
                if Partition.route(line: bytes, among: 3).route != nil { routed += 1 }
                _ = PlainLine(bytes)
            }
        }
        // An empty buffer without a base address.
        #expect(Partition.route(line: UnsafeRawBufferPointer(start: nil, count: 0), among: 3).route == nil)
        print("random: 50000 lines, \(routed) routed")
    }
}
