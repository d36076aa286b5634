/// What one viewer sees under the message list: who is typing and the phrase.
///
/// Views are immutable and shared: every member who is not typing sees the same
/// view object, so it is built (and, by the encoder, serialized) once per change,
/// however large the conversation.
///
/// A view built from ids packs them and the text into one byte array: for each id
/// a four-byte header (its length, and bit 31 set when it needs JSON escapes) and
/// its bytes, then the text. Any id fits: the engine's library users may pass ids
/// far longer than the protocol's 256 bytes. A typer's view is *derived*: the shared view of the
/// others plus which entry it leaves out (the typer) and its own phrase, so the
/// personal views of T typers take O(T) memory in all, not O(T²).
public final class IndicatorView: Sendable, Equatable {
    /// Packed ids then text; for a derived view, only its text.
    package let storage: [UInt8]
    /// How many typers the view shows.
    public let typerCount: Int
    /// Where the text starts in `storage`.
    package let textStart: Int
    /// The view this one is derived from, leaving out one entry.
    package let base: IndicatorView?
    /// The entry of `base` left out (its index among the typers).
    package let omitted: Int
    /// The bytes of the left-out entry in `base.storage`.
    package let omittedBytes: Range<Int>
    /// Where each entry starts in `storage` (own views built by the engine).
    package let entryStarts: [Int32]

    /// The empty indicator every viewer starts from.
    public static let empty = IndicatorView(packed: [], typerCount: 0, textStart: 0)

    /// A view from bytes packed as described above.
    package init(packed: [UInt8], typerCount: Int, textStart: Int, entryStarts: [Int32] = []) {
        storage = packed
        self.typerCount = typerCount
        self.textStart = textStart
        base = nil
        omitted = 0
        omittedBytes = 0..<0
        self.entryStarts = entryStarts
    }

    /// The view of `base` without entry `index` (whose bytes are `bytes`), with the
    /// phrase `text`.
    package init(base: IndicatorView, omitting index: Int, bytes: Range<Int>, text: [UInt8]) {
        precondition(base.base == nil, "a view is derived from an own view")
        storage = text
        typerCount = base.typerCount - 1
        textStart = 0
        self.base = base
        omitted = index
        omittedBytes = bytes
        entryStarts = []
    }

    /// A view of `typing` with the phrase `text`.
    package convenience init(typing: [Identifier], text: String) {
        var packed: [UInt8] = []
        var starts: [Int32] = []
        for id in typing {
            starts.append(Int32(packed.count))
            IndicatorView.pack(id, into: &packed)
        }
        let textStart = packed.count
        packed.append(contentsOf: text.utf8)
        self.init(packed: packed, typerCount: typing.count, textStart: textStart, entryStarts: starts)
    }

    /// Appends the header and bytes of `id` to `packed`.
    @inline(__always)
    package static func pack(_ id: Identifier, into packed: inout [UInt8]) {
        let header = UInt32(truncatingIfNeeded: id.byteCount) | (id.needsEscaping ? 0x8000_0000 : 0)
        withUnsafeBytes(of: header.littleEndian) { packed.append(contentsOf: $0) }
        id.withUnsafeBytes { packed.append(contentsOf: $0) }
    }

    /// The bytes of an entry's header.
    static let headerSize = 4

    /// The byte range of entry `index` in an own view's storage.
    package func entryBytes(_ index: Int) -> Range<Int> {
        let start = Int(entryStarts[index])
        let end = index + 1 < entryStarts.count ? Int(entryStarts[index + 1]) : textStart
        return start..<end
    }

    /// Calls `body` with the packed ids as two segments (the second is empty for
    /// an own view; for a derived one they are the base's entries before and after
    /// the one left out).
    package func withIDSegments<Result>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Result) -> Result {
        if let base {
            return base.storage.withUnsafeBytes { bytes in
                body(UnsafeRawBufferPointer(rebasing: bytes[0..<omittedBytes.lowerBound]),
                     UnsafeRawBufferPointer(rebasing: bytes[omittedBytes.upperBound..<base.textStart]))
            }
        }
        return storage.withUnsafeBytes { bytes in
            body(UnsafeRawBufferPointer(rebasing: bytes[0..<textStart]), UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }

    /// Calls `body` with each typer's id bytes and whether they need escapes.
    package func forEachTyper(_ body: (UnsafeRawBufferPointer, Bool) -> Void) {
        withIDSegments { first, second in
            for segment in [first, second] {
                var offset = 0
                while offset < segment.count {
                    let header = UInt32(littleEndian: segment.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                    let start = offset + IndicatorView.headerSize, length = Int(header & 0x7FFF_FFFF)
                    body(UnsafeRawBufferPointer(rebasing: segment[start..<(start + length)]), header & 0x8000_0000 != 0)
                    offset = start + length
                }
            }
        }
    }

    /// Calls `body` with the UTF-8 bytes of the phrase.
    package func withTextBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[textStart...])) }
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

    /// True when both show the same ids, whatever their representation.
    func sameTypers(as other: IndicatorView) -> Bool {
        if self === other { return true }
        guard typerCount == other.typerCount else { return false }
        if let base, base === other.base, omitted == other.omitted { return true }
        return withIDSegments { a1, a2 in
            other.withIDSegments { b1, b2 in
                IndicatorView.equal(a1, a2, b1, b2)
            }
        }
    }

    /// True when the bytes of `a1` then `a2` equal those of `b1` then `b2`.
    static func equal(_ a1: UnsafeRawBufferPointer, _ a2: UnsafeRawBufferPointer,
                             _ b1: UnsafeRawBufferPointer, _ b2: UnsafeRawBufferPointer) -> Bool {
        guard a1.count + a2.count == b1.count + b2.count else { return false }
        var left = (a1, 0), right = (b1, 0)
        var done = 0
        let total = a1.count + a2.count
        while done < total {
            if left.1 == left.0.count { left = (a2, 0) }
            if right.1 == right.0.count { right = (b2, 0) }
            let run = min(left.0.count - left.1, right.0.count - right.1)
            guard bytesEqual(UnsafeRawBufferPointer(rebasing: left.0[left.1..<(left.1 + run)]),
                             UnsafeRawBufferPointer(rebasing: right.0[right.1..<(right.1 + run)])) else { return false }
            left.1 += run
            right.1 += run
            done += run
        }
        return true
    }

    /// Byte equality of two buffers of the same length, eight bytes at a time.
    @inline(__always)
    static func bytesEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= a.count {
            if a.loadUnaligned(fromByteOffset: index, as: UInt64.self) != b.loadUnaligned(fromByteOffset: index, as: UInt64.self) {
                return false
            }
            index += 8
        }
        while index < a.count {
            if a[index] != b[index] { return false }
            index += 1
        }
        return true
    }

    /// Equal when they show the same ids and text (or are the same object).
    public static func == (lhs: IndicatorView, rhs: IndicatorView) -> Bool {
        if lhs === rhs { return true }
        let sameText = lhs.withTextBytes { a in rhs.withTextBytes { b in a.elementsEqual(b) } }
        return sameText && lhs.sameTypers(as: rhs)
    }
}
