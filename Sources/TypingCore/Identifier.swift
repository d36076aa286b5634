/// A conversation or user id: a non-empty UTF-8 string compared byte for byte.
///
/// Swift's `String` compares by Unicode canonical equivalence, so `"é"` (U+00E9) and
/// `"e\u{301}"` are equal `String`s. Ids in the protocol are opaque: two ids are the
/// same only when their UTF-8 bytes are. `Identifier` keeps the `String` (small ids
/// live inline, without allocation) and defines equality and hashing on its bytes.
public struct Identifier: Hashable, Sendable, CustomStringConvertible {
    /// The id as given, byte for byte.
    public let string: String

    /// Wraps `string` without changing a byte of it.
    public init(_ string: String) {
        self.string = string
    }

    /// The number of UTF-8 bytes of the id.
    public var byteCount: Int { string.utf8.count }

    /// The id itself.
    public var description: String { string }

    /// True when both ids have the same UTF-8 bytes.
    public static func == (lhs: Identifier, rhs: Identifier) -> Bool {
        lhs.string.sameBytes(as: rhs.string)
    }

    /// Hashes the UTF-8 bytes (not the canonical form `String` would hash).
    public func hash(into hasher: inout Hasher) {
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { bytes in
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
        if done == nil {
            for byte in string.utf8 { hasher.combine(byte) }
        }
        hasher.combine(string.utf8.count)
    }
}
