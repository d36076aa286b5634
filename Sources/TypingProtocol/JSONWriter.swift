import TypingCore

/// Appends compact JSON to a byte buffer, as §1 of the protocol writes it.
///
/// Strings escape `"`, `\` and U+0000–U+001F only (`\b \f \n \r \t`, else
/// `\u00xx` with lowercase hex); every other character is written as UTF-8 and
/// `/` is not escaped.
public struct JSONWriter {
    /// Where the bytes go.
    public let buffer: ByteBuffer

    /// An empty writer with its own buffer.
    public init(capacity: Int = 1 << 16) {
        buffer = ByteBuffer(capacity: capacity)
    }

    /// A copy of the bytes written so far.
    public var bytes: [UInt8] { Array(buffer.bytes) }

    /// Appends ASCII text as is (keys, punctuation, constant values).
    @inline(__always)
    public func raw(_ text: StaticString) {
        buffer.append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends bytes as is.
    @inline(__always)
    public func raw(_ other: UnsafeRawBufferPointer) {
        buffer.append(other)
    }

    /// Appends an integer in decimal.
    public func integer(_ value: Int) {
        if value < 0 {
            buffer.append(UInt8(ascii: "-"))
            unsigned(value.magnitude)
        } else {
            unsigned(UInt(value))
        }
    }

    /// Appends an unsigned integer in decimal.
    func unsigned(_ value: UInt) {
        if value < 10 {
            buffer.append(UInt8(truncatingIfNeeded: value) &+ 0x30)
            return
        }
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { digits in
            var index = digits.count
            var rest = value
            repeat {
                index -= 1
                digits[index] = UInt8(truncatingIfNeeded: rest % 10) &+ 0x30
                rest /= 10
            } while rest > 0
            buffer.append(UnsafeRawBufferPointer(rebasing: digits[index...]))
        }
    }

    /// Appends a quoted, escaped JSON string.
    public func string(_ text: String) {
        var text = text
        text.withUTF8 { string(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Appends an id as a quoted JSON string, copying it as is when no byte
    /// needs an escape.
    @inline(__always)
    public func identifier(_ id: Identifier) {
        if id.needsEscaping {
            id.withUnsafeBytes { string(bytes: $0) }
        } else {
            id.withUnsafeBytes { buffer.appendQuoted($0) }
        }
    }

    /// Appends id bytes as a quoted JSON string; `escapes` says whether any byte
    /// needs an escape (if not, they are copied as they are).
    @inline(__always)
    public func identifier(bytes: UnsafeRawBufferPointer, escapes: Bool) {
        if escapes {
            string(bytes: bytes)
        } else {
            buffer.appendQuoted(bytes)
        }
    }

    /// Appends UTF-8 bytes as a quoted, escaped JSON string.
    public func string(bytes text: UnsafeRawBufferPointer) {
        if !JSONWriter.needsEscaping(text) {
            buffer.appendQuoted(text)
            return
        }
        buffer.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in 0..<text.count {
            let byte = text[index]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C { continue }
            buffer.append(UnsafeRawBufferPointer(rebasing: text[runStart..<index]))
            escape(byte)
            runStart = index + 1
        }
        buffer.append(UnsafeRawBufferPointer(rebasing: text[runStart...]))
        buffer.append(UInt8(ascii: "\""))
    }

    /// True when some byte is below 0x20, `"` or `\\`; eight bytes at a time.
    @inline(__always)
    static func needsEscaping(_ text: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= text.count {
            if Identifier.needsEscape(text.loadUnaligned(fromByteOffset: index, as: UInt64.self)) { return true }
            index += 8
        }
        while index < text.count {
            let byte = text[index]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C { return true }
            index += 1
        }
        return false
    }

    /// Appends the escape sequence of one byte that needs one.
    func escape(_ byte: UInt8) {
        buffer.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: buffer.append(UInt8(ascii: "\""))
        case 0x5C: buffer.append(UInt8(ascii: "\\"))
        case 0x08: buffer.append(UInt8(ascii: "b"))
        case 0x0C: buffer.append(UInt8(ascii: "f"))
        case 0x0A: buffer.append(UInt8(ascii: "n"))
        case 0x0D: buffer.append(UInt8(ascii: "r"))
        case 0x09: buffer.append(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            raw("u00")
            hex.withUTF8Buffer { digits in
                buffer.append(digits[Int(byte >> 4)])
                buffer.append(digits[Int(byte & 0x0F)])
            }
        }
    }

    /// Appends a JSON array of id strings.
    public func array(_ ids: [Identifier]) {
        buffer.append(UInt8(ascii: "["))
        for (index, id) in ids.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            identifier(id)
        }
        buffer.append(UInt8(ascii: "]"))
    }

    /// Appends `key` (ASCII, with its leading comma and colon) and an integer.
    @inline(__always)
    public func integer(_ key: StaticString, _ value: Int) {
        raw(key)
        integer(value)
    }

    /// Appends `,"id":` and the id, if there is one.
    @inline(__always)
    public func optionalID(_ id: RequestID?) {
        guard let id else { return }
        raw(",\"id\":")
        requestID(id)
    }

    /// Appends an `id` value: a string or an integer.
    public func requestID(_ id: RequestID) {
        switch id {
        case .string(let text): string(text)
        case .integer(let value): integer(value)
        }
    }
}
