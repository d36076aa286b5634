/// What one viewer sees under the message list: the user ids listed in `typing`
/// (at most `--max-listed`), how many more typers there are (`more`), what each
/// listed typer is doing (``activities``), and the phrase.
///
/// Views are immutable and shared. A conversation's *own* view is what a member who
/// is not typing sees; it packs the ids of the first min(typers, listed + 1) typers
/// and the text into one byte array: for each id a four-byte header (its length,
/// and bit 31 set when it needs JSON escapes) and its bytes, then the text. Every
/// member who is not typing holds the same own view object, so it is built (and,
/// by the JSON format, encoded) once per change, however large the room.
///
/// A typer sees everyone but themselves: their view is *derived* from the own view,
/// as the entry it leaves out (the typer, when among the packed entries) and its
/// own counts and phrase, so the personal views of T typers cost O(T) in all, not
/// O(T²). Any id fits: the engine's library users may pass ids far longer than the
/// protocol's 256 bytes.
public final class IndicatorView: Sendable, Equatable {
    /// Own view: the packed entries, then the text. Derived view: only the text.
    package let storage: [UInt8]
    /// Where the text starts in `storage`.
    package let textStart: Int
    /// Own view: where each packed entry starts in `storage`, then `textStart`.
    package let entryStarts: [Int32]
    /// The own view whose entries a derived view lists (nil for an own view).
    package let base: IndicatorView?
    /// The entry of `base` left out, or -1.
    package let omitted: Int
    /// Own view: the ``Activity`` of each packed entry, or empty when every packed
    /// entry is typing (the common case: no storage). Derived view: empty (its
    /// base's).
    package let entryActivities: [UInt8]
    /// How many user ids the view lists.
    public let listed: Int
    /// How many typers the viewer sees beyond those listed.
    public let more: Int

    /// How many typers the viewer sees.
    public var typerCount: Int { listed + more }

    /// The empty indicator every viewer starts from.
    public static let empty = IndicatorView(packed: [], entryStarts: [0], listed: 0, more: 0, textStart: 0)

    /// True when this is a shared view rephrased for another table or style: every
    /// entry of its base, none left out.
    package var isVariant: Bool { base != nil && omitted < 0 }

    /// An own view: `packed` holds the entries (starting at `entryStarts`, whose
    /// last element is where the text starts) then the text; it lists the first
    /// `listed` entries and counts `more` beyond them.
    package init(
        packed: [UInt8], entryStarts: [Int32], listed: Int, more: Int, textStart: Int,
        activities: [UInt8] = []
    ) {
        storage = packed
        self.entryStarts = entryStarts
        self.listed = listed
        self.more = more
        self.textStart = textStart
        base = nil
        omitted = -1
        entryActivities = activities
    }

    /// A view of `base`'s entries without entry `omitted` (-1: none left out), listing
    /// `listed` of them, with `more` beyond and the phrase `text`. `base` must pack at
    /// least `listed + 1` entries when one is left out, else `listed`.
    package init(base: IndicatorView, omitting omitted: Int, listed: Int, more: Int, text: [UInt8]) {
        storage = text
        textStart = 0
        entryStarts = []
        self.base = base
        self.omitted = omitted
        self.listed = listed
        self.more = more
        entryActivities = []
    }

    /// A view listing `typing`, counting `more` typers beyond them, with the phrase
    /// `text`: for building the events an embedder expects in its tests, or sends
    /// on. Views built this way compare equal (`==`) to the engine's when they
    /// list the same ids, count the same `more` and have the same text.
    /// `activities`, when not empty, gives the activity of each listed id (those
    /// left out are ``Activity/typing``).
    public convenience init(typing: [Identifier], more: Int = 0, activities: [Activity] = [], text: String) {
        var packed: [UInt8] = []
        var starts: [Int32] = []
        for id in typing {
            starts.append(Int32(packed.count))
            IndicatorView.pack(id, into: &packed)
        }
        let textStart = packed.count
        starts.append(Int32(textStart))
        packed.append(contentsOf: text.utf8)
        var raw = typing.indices.map { $0 < activities.count ? activities[$0].rawValue : Activity.typing.rawValue }
        if raw.allSatisfy({ $0 == Activity.typing.rawValue }) { raw = [] }
        self.init(
            packed: packed, entryStarts: starts, listed: typing.count, more: max(0, more), textStart: textStart,
            activities: raw)
    }

    /// Appends the header and bytes of `id` to `packed`.
    @inline(__always)
    package static func pack(_ id: Identifier, into packed: inout [UInt8]) {
        let header = UInt32(truncatingIfNeeded: id.byteCount) | (id.needsEscaping ? 0x8000_0000 : 0)
        packed.append(UInt8(truncatingIfNeeded: header))
        packed.append(UInt8(truncatingIfNeeded: header >> 8))
        packed.append(UInt8(truncatingIfNeeded: header >> 16))
        packed.append(UInt8(truncatingIfNeeded: header >> 24))
        id.withUnsafeBytes { packed.append(contentsOf: $0) }
    }

    /// The bytes of an entry's header.
    static let headerSize = 4

    /// The number of entries an own view packs.
    package var packedCount: Int { entryStarts.count - 1 }

    /// Calls `body` with the packed entries the view lists, as two segments of
    /// consecutive entries (the second is empty unless an entry is left out in the
    /// middle).
    package func withIDSegments<Result>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Result) -> Result {
        IndicatorView.withSegments(of: base ?? self, omitting: omitted, listed: listed, body)
    }

    /// Calls `body` with the entries of own view `own` that a view leaving out entry
    /// `omitted` (-1: none) and listing `listed` of them shows, as two segments.
    package static func withSegments<Result>(
        of own: IndicatorView, omitting omitted: Int, listed: Int,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Result
    ) -> Result {
        own.storage.withUnsafeBytes { bytes in
            let start = { (entry: Int) in Int(own.entryStarts[entry]) }
            if omitted >= 0 {
                return body(
                    UnsafeRawBufferPointer(rebasing: bytes[0..<start(omitted)]),
                    UnsafeRawBufferPointer(rebasing: bytes[start(omitted + 1)..<start(listed + 1)]))
            }
            return body(
                UnsafeRawBufferPointer(rebasing: bytes[0..<start(listed)]), UnsafeRawBufferPointer(start: nil, count: 0)
            )
        }
    }

    /// Calls `body` with each listed id's bytes and whether they need escapes.
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

    /// Calls `body` with each packed id of an own view (listed or not), in order,
    /// and whether it needs escapes.
    package func forEachPacked(_ body: (UnsafeRawBufferPointer, Bool) -> Void) {
        storage.withUnsafeBytes { bytes in
            var offset = 0
            while offset < textStart {
                let header = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                let start = offset + IndicatorView.headerSize, length = Int(header & 0x7FFF_FFFF)
                body(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]), header & 0x8000_0000 != 0)
                offset = start + length
            }
        }
    }

    /// Calls `body` with the UTF-8 bytes of the phrase.
    package func withTextBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[textStart...])) }
    }

    /// The activity of each listed typer, in order (every one ``Activity/typing``
    /// unless ``showsActivities``).
    public var activities: [Activity] {
        var result: [Activity] = []
        result.reserveCapacity(listed)
        forEachActivity { result.append($0) }
        return result
    }

    /// True when a listed typer does something else than type: then `indicator`
    /// events carry `activities` (Protocol.md#activities-recording-sending-sharing).
    public var showsActivities: Bool {
        let own = base ?? self
        guard !own.entryActivities.isEmpty else { return false }
        var shows = false
        forEachActivity { if $0 != .typing { shows = true } }
        return shows
    }

    /// Calls `body` with the activity of each listed typer, in order.
    package func forEachActivity(_ body: (Activity) -> Void) {
        let own = base ?? self
        let entries = omitted >= 0 ? listed + 1 : listed
        for entry in 0..<entries where entry != omitted {
            body(own.activity(ofEntry: entry))
        }
    }

    /// The activity of packed entry `entry` of an own view.
    @inline(__always)
    package func activity(ofEntry entry: Int) -> Activity {
        guard entry < entryActivities.count else { return .typing }
        return Activity(rawValue: entryActivities[entry]) ?? .typing
    }

    /// True when this view lists the activities of own view `own`'s entries
    /// without entry `omitted` (-1: none), as many as it lists.
    func sameActivities(asEntriesOf own: IndicatorView, omitting omitted: Int) -> Bool {
        let mine = base ?? self
        if mine.entryActivities.isEmpty && own.entryActivities.isEmpty { return true }
        var entry = 0, same = true
        forEachActivity { activity in
            if entry == omitted { entry += 1 }
            if own.activity(ofEntry: entry) != activity { same = false }
            entry += 1
        }
        return same
    }

    /// True when both list the same activities.
    func sameActivities(as other: IndicatorView) -> Bool {
        let mine = base ?? self, theirs = other.base ?? other
        if mine.entryActivities.isEmpty && theirs.entryActivities.isEmpty { return true }
        guard listed == other.listed else { return false }
        var left: [Activity] = [], right: [Activity] = []
        forEachActivity { left.append($0) }
        other.forEachActivity { right.append($0) }
        return left == right
    }

    /// The user ids listed, in order.
    public var typing: [Identifier] {
        var ids: [Identifier] = []
        ids.reserveCapacity(listed)
        forEachTyper { bytes, _ in ids.append(Identifier(bytes: bytes)) }
        return ids
    }

    /// The phrase, such as "Alice and Bob are typing...", or "" when nobody types.
    public var text: String { withTextBytes { String(decoding: $0, as: UTF8.self) } }

    /// True when both list the same ids, whatever their representation.
    func sameTypers(as other: IndicatorView) -> Bool {
        if self === other { return true }
        guard listed == other.listed else { return false }
        if let base, base === other.base, omitted == other.omitted { return true }
        return withIDSegments { a1, a2 in
            other.withIDSegments { b1, b2 in IndicatorView.equal(a1, a2, b1, b2) }
        }
    }

    /// True when the phrase's bytes are `text`'s.
    func hasText(_ text: UnsafeRawBufferPointer) -> Bool {
        withTextBytes { mine in mine.count == text.count && IndicatorView.bytesEqual(mine, text) }
    }

    /// True when the bytes of `a1` then `a2` equal those of `b1` then `b2`.
    static func equal(
        _ a1: UnsafeRawBufferPointer, _ a2: UnsafeRawBufferPointer,
        _ b1: UnsafeRawBufferPointer, _ b2: UnsafeRawBufferPointer
    ) -> Bool {
        guard a1.count + a2.count == b1.count + b2.count else { return false }
        var left = (a1, 0), right = (b1, 0)
        var done = 0
        let total = a1.count + a2.count
        while done < total {
            if left.1 == left.0.count { left = (a2, 0) }
            if right.1 == right.0.count { right = (b2, 0) }
            let run = min(left.0.count - left.1, right.0.count - right.1)
            guard
                bytesEqual(
                    UnsafeRawBufferPointer(rebasing: left.0[left.1..<(left.1 + run)]),
                    UnsafeRawBufferPointer(rebasing: right.0[right.1..<(right.1 + run)]))
            else { return false }
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
            if a.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                != b.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            {
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

    /// Equal when they list the same ids with the same activities, count the same
    /// `more` and have the same text: what change detection compares
    /// (Protocol.md#bounded-output, Protocol.md#activities-recording-sending-sharing).
    public static func == (lhs: IndicatorView, rhs: IndicatorView) -> Bool {
        if lhs === rhs { return true }
        guard lhs.more == rhs.more else { return false }
        let sameText = lhs.withTextBytes { rhs.hasText($0) }
        return sameText && lhs.sameTypers(as: rhs) && lhs.sameActivities(as: rhs)
    }
}
