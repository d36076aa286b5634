/// A conversation or user id: a non-empty UTF-8 string compared byte for byte.
///
/// Swift's `String` compares by Unicode canonical equivalence, so `"é"` (U+00E9) and
/// `"e\u{301}"` are equal `String`s. Ids in the protocol are opaque: two ids are the
/// same only when their UTF-8 bytes are. `Identifier` keeps the bytes themselves:
/// up to 16 inline (no allocation, compared and hashed as two words), longer ones
/// in a shared buffer. It also knows whether any byte needs escaping in JSON, so
/// the encoder can copy plain ids as they are.
public struct Identifier: Hashable, Sendable, CustomStringConvertible {
    /// The most bytes kept inline.
    @usableFromInline static let inlineCapacity = 16

    /// Bytes 0..<8 (zero-padded).
    @usableFromInline var word0: UInt64 = 0
    /// Bytes 8..<16 (zero-padded).
    @usableFromInline var word1: UInt64 = 0
    /// The byte count (bits 0–31) and whether a byte needs a JSON escape (bit 32).
    @usableFromInline var info: UInt64 = 0
    /// All the bytes, for ids longer than ``inlineCapacity``.
    @usableFromInline var spill: IdentifierBytes?

    /// An id with the given UTF-8 bytes.
    public init(bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        let head = min(count, Identifier.inlineCapacity)
        withUnsafeMutableBytes(of: &word0) { word in
            word.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<min(head, 8)]))
        }
        if head > 8 {
            withUnsafeMutableBytes(of: &word1) { word in
                word.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[8..<head]))
            }
        }
        var escapes = false
        if count > Identifier.inlineCapacity {
            spill = IdentifierBytes(bytes)
            escapes = bytes.contains { Identifier.mayNeedEscape(byte: $0) }
        } else {
            // Zero padding would look like control bytes: mark the padding as plain.
            let plainPadding: (UInt64, UInt64) = Identifier.padding(count)
            escapes =
                Identifier.mayNeedEscape(word0 | plainPadding.0) || Identifier.mayNeedEscape(word1 | plainPadding.1)
        }
        info = UInt64(UInt32(truncatingIfNeeded: count)) | (escapes ? 1 << 32 : 0)
    }

    /// 0x20 in each byte position past `count` (of 16), so padding passes as plain.
    @inline(__always)
    static func padding(_ count: Int) -> (UInt64, UInt64) {
        let spaces: UInt64 = 0x2020_2020_2020_2020
        func fill(_ used: Int) -> UInt64 {
            used >= 8 ? 0 : used <= 0 ? spaces : spaces & ~(UInt64.max >> (64 - 8 * used))
        }
        return (UInt64(littleEndian: fill(count)), UInt64(littleEndian: fill(count - 8)))
    }

    /// True when one of the eight bytes of `word` may start a character that JSON
    /// or text output escapes: below 0x20, `"`, `\`, 0x7F, or the lead bytes 0xC2
    /// (U+0080–U+00BF), 0xD8 (U+0600–U+063F) and 0xE2 (U+2000–U+2FFF), of which the
    /// writers escape only U+0080–U+009F, U+061C (text), U+200E, U+200F,
    /// U+202A–U+202E, U+2066–U+2069 (text), U+2028 and U+2029. Classic SWAR
    /// zero-byte tests, no loop.
    @inlinable @inline(__always)
    package static func mayNeedEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func has(_ byte: UInt64) -> UInt64 {
            let x = word ^ (ones &* byte)
            return (x &- ones) & ~x & highs
        }
        let below = (word &- ones &* 0x20) & ~word & highs
        if (below | has(0x22) | has(0x5C) | has(0x7F)) != 0 { return true }
        // Only a word with a byte of 0x80 or more can hold the lead bytes.
        return word & highs != 0 && (has(0xC2) | has(0xD8) | has(0xE2)) != 0
    }

    /// The byte-at-a-time form of ``mayNeedEscape(_:)``.
    @inlinable @inline(__always)
    package static func mayNeedEscape(byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F || byte == 0xC2 || byte == 0xD8 || byte == 0xE2
    }

    /// An id with the UTF-8 bytes of `string`, unchanged.
    public init(_ string: String) {
        var string = string
        self = string.withUTF8 { Identifier(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// The empty id: never a conversation, user or thread (they have 1 to 256
    /// bytes); stands for "none" where an optional would cost more.
    @inlinable package static var none: Identifier { Identifier() }

    /// The empty id (see ``none``).
    @inlinable init() {}

    /// The number of UTF-8 bytes.
    @inlinable public var byteCount: Int { Int(info & 0xFFFF_FFFF) }

    /// True when some byte may need an escape in JSON (see ``mayNeedEscape(_:)``).
    @inlinable package var needsEscaping: Bool { info & (1 << 32) != 0 }

    /// The most bytes the id takes as a JSON or text string, quotes included: its
    /// bytes, or six times as many when some byte may need an escape (`\u001f` in
    /// JSON; `\u{1f}`, and `\u{61c}` for two bytes, in text).
    var encodedBound: Int { (needsEscaping ? 6 * byteCount : byteCount) + 2 }

    /// Calls `body` with the id's bytes.
    @inlinable
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        if let spill { return try spill.bytes.withUnsafeBytes(body) }
        var words = (word0, word1)
        let count = byteCount
        return try Swift.withUnsafeBytes(of: &words) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    /// The id as a `String` (made on demand).
    public var string: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    /// The id itself.
    public var description: String { string }

    /// True when both ids have the same bytes.
    @inlinable
    public static func == (lhs: Identifier, rhs: Identifier) -> Bool {
        guard lhs.info == rhs.info, lhs.word0 == rhs.word0, lhs.word1 == rhs.word1 else { return false }
        guard let left = lhs.spill, let right = rhs.spill else { return true }
        return left === right || left.bytes == right.bytes
    }

    /// True when the bytes of `self` come before those of `other` (bytewise, a
    /// prefix first): the order of ids where names tie (Protocol.md#order-of-typers).
    func precedes(_ other: Identifier) -> Bool {
        withUnsafeBytes { mine in other.withUnsafeBytes { theirs in mine.lexicographicallyPrecedes(theirs) } }
    }

    /// Feeds the id to `hasher`: its inline words (the first 16 bytes, the count and
    /// the escape flag), then the bytes past them, if any. Three words cost a
    /// dictionary lookup far less than feeding the bytes one buffer at a time.
    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(word0)
        hasher.combine(word1)
        hasher.combine(info)
        if let spill {
            spill.bytes.withUnsafeBytes {
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: $0[Identifier.inlineCapacity...]))
            }
        }
    }

    /// The inline part of the id: all of it for ids of up to 16 bytes.
    @inlinable var fingerprint: Fingerprint { Fingerprint(word0: word0, word1: word1, info: info) }

    /// The id whose fingerprint is `fingerprint` (complete ones only).
    @inlinable init(_ fingerprint: Fingerprint) {
        word0 = fingerprint.word0
        word1 = fingerprint.word1
        info = fingerprint.info
    }

    /// The first 16 bytes, the count and the escape flag of an id: 24 bytes with no
    /// reference to count. Equal fingerprints mean equal ids when ``isComplete``.
    @usableFromInline
    package struct Fingerprint: Equatable, Sendable {
        @usableFromInline var word0: UInt64
        @usableFromInline var word1: UInt64
        @usableFromInline var info: UInt64

        @inlinable init(word0: UInt64, word1: UInt64, info: UInt64) {
            self.word0 = word0
            self.word1 = word1
            self.info = info
        }

        /// The fingerprint of no id (free slots).
        static let none = Fingerprint(word0: 0, word1: 0, info: 0)

        /// True when the id fits inline, so the fingerprint is the whole id.
        @inlinable var isComplete: Bool { info & 0xFFFF_FFFF <= UInt64(Identifier.inlineCapacity) }
    }

    /// A fast 64-bit hash of the bytes, keyed by `seed` (for the engine's tables).
    @inlinable
    package func hash(seed: UInt64) -> UInt64 {
        var hash = Mixer.mix(seed ^ info)
        hash = Mixer.mix(hash ^ word0)
        hash = Mixer.mix(hash ^ word1)
        if let spill {
            spill.bytes.withUnsafeBytes { bytes in
                var index = Identifier.inlineCapacity
                while index < bytes.count {
                    var word: UInt64 = 0
                    let end = min(index + 8, bytes.count)
                    withUnsafeMutableBytes(of: &word) {
                        $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[index..<end]))
                    }
                    hash = Mixer.mix(hash ^ word)
                    index = end
                }
            }
        }
        return hash
    }
}

/// The bytes of an id longer than ``Identifier/inlineCapacity``.
@usableFromInline
final class IdentifierBytes: Sendable {
    /// All the bytes.
    @usableFromInline let bytes: [UInt8]

    /// Copies `bytes`.
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = Array(bytes)
    }
}

/// The 64-bit finalizer of SplitMix64: every input bit affects every output bit.
/// With a random per-engine seed mixed in first, table positions cannot be
/// predicted from outside, so crafted ids cannot force collisions.
@usableFromInline
package enum Mixer {
    /// Mixes `value`.
    @inlinable @inline(__always)
    package static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }
}
