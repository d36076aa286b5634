import TypingCore

/// Appends compact JSON to a byte buffer, as §1 of the protocol writes it.
///
/// Strings escape `"`, `\` and U+0000–U+001F only (`\b \f \n \r \t`, else
/// `\u00xx` with lowercase hex); every other character is written as UTF-8 and
/// `/` is not escaped.
public struct JSONWriter {
    /// The bytes written so far.
    public var bytes: [UInt8] = []

    /// An empty writer.
    public init() {}

    /// Appends ASCII text as is (keys, punctuation, constant values).
    @inline(__always)
    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends bytes as is.
    @inline(__always)
    public mutating func raw(_ other: [UInt8]) {
        bytes.append(contentsOf: other)
    }

    /// Appends an integer in decimal.
    public mutating func integer(_ value: Int) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            unsigned(value.magnitude)
        } else {
            unsigned(UInt(value))
        }
    }

    /// Appends an unsigned integer in decimal.
    mutating func unsigned(_ value: UInt) {
        if value < 10 {
            bytes.append(UInt8(truncatingIfNeeded: value) &+ 0x30)
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
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: digits[index...]))
        }
    }

    /// Appends a quoted, escaped JSON string.
    public mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { string(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Appends an id as a quoted JSON string, copying it as is when no byte
    /// needs an escape.
    @inline(__always)
    public mutating func identifier(_ id: Identifier) {
        if id.needsEscaping {
            id.withUnsafeBytes { string(bytes: $0) }
        } else {
            bytes.append(UInt8(ascii: "\""))
            id.withUnsafeBytes { bytes.append(contentsOf: $0) }
            bytes.append(UInt8(ascii: "\""))
        }
    }

    /// Appends UTF-8 bytes as a quoted, escaped JSON string.
    public mutating func string(bytes text: UnsafeRawBufferPointer) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in 0..<text.count {
            let byte = text[index]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C { continue }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[runStart..<index]))
            escape(byte)
            runStart = index + 1
        }
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[runStart...]))
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends the escape sequence of one byte that needs one.
    mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: bytes.append(UInt8(ascii: "\""))
        case 0x5C: bytes.append(UInt8(ascii: "\\"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            raw("u00")
            hex.withUTF8Buffer { digits in
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0x0F)])
            }
        }
    }

    /// Appends a JSON array of id strings.
    public mutating func array(_ ids: [Identifier]) {
        bytes.append(UInt8(ascii: "["))
        for (index, id) in ids.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            identifier(id)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Appends an `id` value: a string or an integer.
    public mutating func requestID(_ id: RequestID) {
        switch id {
        case .string(let text): string(text)
        case .integer(let value): integer(value)
        }
    }
}
