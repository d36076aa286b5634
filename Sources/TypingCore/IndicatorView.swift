/// What one viewer sees under the message list: who is typing and the phrase.
///
/// Views are immutable and shared: every member who is not typing sees the same
/// view object, so it is built (and, by the encoder, serialized) once per change,
/// however large the conversation.
///
/// The typers' ids and the text are packed into one byte array: for each id a
/// two-byte header (its length, and bit 15 set when it needs JSON escapes) and its
/// bytes, then the text. Building a view is a few copies, comparing two is one
/// byte comparison, and nothing inside is reference-counted.
public final class IndicatorView: Sendable, Equatable {
    /// The packed ids, then the text.
    public let packed: [UInt8]
    /// How many typers the view shows.
    public let typerCount: Int
    /// Where the text starts in `packed`.
    public let textStart: Int

    /// The empty indicator every viewer starts from.
    public static let empty = IndicatorView(packed: [], typerCount: 0, textStart: 0)

    /// A view from bytes packed as described above.
    public init(packed: [UInt8], typerCount: Int, textStart: Int) {
        self.packed = packed
        self.typerCount = typerCount
        self.textStart = textStart
    }

    /// A view of `typing` with the phrase `text`.
    public convenience init(typing: [Identifier], text: String) {
        var packed: [UInt8] = []
        for id in typing { IndicatorView.pack(id, into: &packed) }
        let textStart = packed.count
        packed.append(contentsOf: text.utf8)
        self.init(packed: packed, typerCount: typing.count, textStart: textStart)
    }

    /// Appends the header and bytes of `id` to `packed`.
    @inline(__always)
    public static func pack(_ id: Identifier, into packed: inout [UInt8]) {
        let header = UInt16(id.byteCount) | (id.needsEscaping ? 0x8000 : 0)
        packed.append(UInt8(truncatingIfNeeded: header))
        packed.append(UInt8(truncatingIfNeeded: header >> 8))
        id.withUnsafeBytes { packed.append(contentsOf: $0) }
    }

    /// Calls `body` with each typer's id bytes and whether they need escapes.
    @inlinable
    public func forEachTyper(_ body: (UnsafeRawBufferPointer, Bool) -> Void) {
        packed.withUnsafeBytes { bytes in
            var offset = 0
            while offset < textStart {
                let header = UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
                let length = Int(header & 0x7FFF)
                body(UnsafeRawBufferPointer(rebasing: bytes[(offset + 2)..<(offset + 2 + length)]), header & 0x8000 != 0)
                offset += 2 + length
            }
        }
    }

    /// Calls `body` with the UTF-8 bytes of the phrase.
    @inlinable
    public func withTextBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        packed.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[textStart...])) }
    }

    /// The user ids the viewer sees typing, in streak order.
    public var typing: [Identifier] {
        var ids: [Identifier] = []
        ids.reserveCapacity(typerCount)
        forEachTyper { bytes, _ in ids.append(Identifier(bytes: bytes)) }
        return ids
    }

    /// The phrase, such as "Alice and Bob are typing...", or "" when nobody types.
    public var text: String { withTextBytes { String(decoding: $0, as: UTF8.self) } }

    /// True when nobody is shown typing.
    public var isEmpty: Bool { typerCount == 0 }

    /// Equal when they show the same ids and text (or are the same object).
    public static func == (lhs: IndicatorView, rhs: IndicatorView) -> Bool {
        lhs === rhs || (lhs.textStart == rhs.textStart && lhs.packed == rhs.packed)
    }
}
