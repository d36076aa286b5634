/// The router's quick reading of a line in the plain shape most lines have: a flat
/// JSON object whose strings hold no escapes, whose numbers are integers of at most
/// 18 digits, with spaces and tabs between tokens. For such a line it finds what
/// ``Partition/route(line:among:)`` needs (`cmd`, `conv`, `at`, `id`) without
/// building a document, and checks the whole line as jansson would (the syntax,
/// UTF-8 in strings, no control bytes, no key twice). Anything outside that shape
/// (an escape, a nested value, a real number, a line jansson would refuse) is
/// "unsure", and the line goes through jansson instead: the two readings agree
/// on every line the quick one is sure of (`LineRouteTests` and `LineRouteAttackTests` compare them).
package struct PlainLine {
    /// The contents of the `cmd`, `conv` and `id` values when they are strings.
    package var cmd: Range<Int>?
    package var conv: Range<Int>?
    package var id: Range<Int>?
    /// Whether the object has an `at` key (any value).
    package var hasAt = false

    /// Reads `line`; nil when it is not in the plain shape (or is not JSON).
    package init?(_ line: UnsafeRawBufferPointer) {
        var reader = Reader(bytes: line)
        reader.skipSpace()
        guard reader.take(0x7B) else { return nil } // {
        reader.skipSpace()
        if reader.peek == 0x7D { return nil } // {}: no command; jansson's reading reports it
        // The keys seen, to refuse a key given twice (JSON_REJECT_DUPLICATES).
        var keys = InlineArray<16, Range<Int>>(repeating: 0..<0)
        var keyCount = 0
        while true {
            guard let key = reader.string(), keyCount < keys.count else { return nil }
            for index in 0..<keyCount where Reader.same(keys[index], key, in: line) { return nil }
            keys[keyCount] = key
            keyCount += 1
            reader.skipSpace()
            guard reader.take(0x3A) else { return nil } // :
            reader.skipSpace()
            guard let value = reader.value() else { return nil }
            let text: Range<Int>? = if case .string(let range) = value { range } else { nil }
            switch Reader.field(key, in: line) {
            case .cmd: cmd = text
            case .conv: conv = text
            case .id: id = text
            case .at: hasAt = true
            case .other: break
            }
            reader.skipSpace()
            if reader.take(0x2C) { reader.skipSpace(); continue } // ,
            guard reader.take(0x7D) else { return nil } // }
            break
        }
        reader.skipSpace()
        guard reader.atEnd else { return nil }
    }

    /// A cursor over a line's bytes.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        var atEnd: Bool { index == bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// A value read in the plain shape.
        enum Value {
            /// A string: the range of its contents.
            case string(Range<Int>)
            /// `true`, `false`, `null` or an integer.
            case other
        }

        /// The value here; nil for anything outside the plain shape.
        mutating func value() -> Value? {
            guard let first = peek else { return nil }
            switch first {
            case 0x22: return string().map { .string($0) }
            case 0x74: return word("true") ? .other : nil
            case 0x66: return word("false") ? .other : nil
            case 0x6E: return word("null") ? .other : nil
            case 0x2D, 0x30...0x39: return integer() ? .other : nil
            default: return nil // an object, an array, or no JSON
            }
        }

        /// A string without escapes or control bytes, in valid UTF-8: the range of
        /// its contents.
        mutating func string() -> Range<Int>? {
            guard take(0x22) else { return nil }
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 0x22 {
                    index += 1
                    return start..<(index - 1)
                }
                if byte == 0x5C || byte < 0x20 { return nil }
                if byte < 0x80 {
                    index += 1
                } else {
                    guard let length = Self.sequenceLength(bytes, at: index) else { return nil }
                    index += length
                }
            }
            return nil
        }

        /// The length of the well-formed UTF-8 sequence at `at` (its first byte is
        /// at least 0x80), or nil: no overlong forms, no surrogates, nothing past
        /// U+10FFFF, as jansson checks strings.
        static func sequenceLength(_ bytes: UnsafeRawBufferPointer, at start: Int) -> Int? {
            let first = bytes[start]
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF // the second byte's range
            switch first {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return nil
            }
            guard start + length <= bytes.count else { return nil }
            let second = bytes[start + 1]
            guard second >= low && second <= high else { return nil }
            var next = start + 2
            while next < start + length {
                guard bytes[next] & 0xC0 == 0x80 else { return nil }
                next += 1
            }
            return length
        }

        /// `literal` followed by no letter (jansson reads a word whole).
        mutating func word(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            let text = literal.utf8Start
            for offset in 0..<count where bytes[index + offset] != text[offset] { return false }
            index += count
            if let next = peek, (next | 0x20) >= 0x61 && (next | 0x20) <= 0x7A { return false }
            return true
        }

        /// An integer of 1 to 18 digits without a leading zero, maybe negative, not
        /// followed by a fraction or an exponent (jansson's `long long`, no overflow).
        mutating func integer() -> Bool {
            _ = take(0x2D)
            let start = index
            while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
            let digits = index - start
            guard digits >= 1 && digits <= 18 else { return false }
            if digits > 1 && bytes[start] == 0x30 { return false }
            if let next = peek, next == 0x2E || next == 0x65 || next == 0x45 { return false }
            return true
        }

        enum Field { case cmd, conv, id, at, other }

        /// Which of the fields the router reads `key` is.
        static func field(_ key: Range<Int>, in bytes: UnsafeRawBufferPointer) -> Field {
            switch key.count {
            case 2:
                if bytes[key.lowerBound] == 0x69 && bytes[key.lowerBound + 1] == 0x64 { return .id }
                if bytes[key.lowerBound] == 0x61 && bytes[key.lowerBound + 1] == 0x74 { return .at }
            case 3:
                if bytes[key.lowerBound] == 0x63 && bytes[key.lowerBound + 1] == 0x6D
                    && bytes[key.lowerBound + 2] == 0x64
                {
                    return .cmd
                }
            case 4:
                if bytes[key.lowerBound] == 0x63 && bytes[key.lowerBound + 1] == 0x6F
                    && bytes[key.lowerBound + 2] == 0x6E
                    && bytes[key.lowerBound + 3] == 0x76
                {
                    return .conv
                }
            default: break
            }
            return .other
        }

        /// Whether two ranges of `bytes` hold the same bytes.
        static func same(_ a: Range<Int>, _ b: Range<Int>, in bytes: UnsafeRawBufferPointer) -> Bool {
            guard a.count == b.count else { return false }
            for offset in 0..<a.count where bytes[a.lowerBound + offset] != bytes[b.lowerBound + offset] {
                return false
            }
            return true
        }
    }
}
