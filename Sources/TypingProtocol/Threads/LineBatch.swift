import TypingCore

/// A batch of framed input lines, and what parsing made of each: the unit that
/// moves between threads in a ``ParsingPool``.
///
/// The session frames lines into a batch (``Session/frame(_:into:)``), any thread
/// parses it (``decode(with:)``: jansson and the field checks, the costly part, which
/// needs no engine), and the session applies the parsed lines in order
/// (``Session/apply(_:)``), exactly as it would have applied them one by one: the
/// output is the same, byte for byte. A batch keeps its storage when it is reset,
/// so batches that go round a ring allocate nothing once warm; storage grown far
/// past the budget by one long line is given back.
@usableFromInline
package struct LineBatch: Sendable {
    /// What framing found at one place of the input.
    @usableFromInline
    enum Entry: Sendable {
        /// A line (without LF or one trailing CR), at `start ..< start + count` in `bytes`.
        case line(number: Int, start: Int, count: Int)
        /// A line over the limit (its bytes are skipped, not kept).
        case tooLong(number: Int, limit: Int)
    }

    /// The bytes of the lines, back to back.
    @usableFromInline package var bytes: [UInt8] = []
    @usableFromInline var entries: [Entry] = []
    /// `parsed[i]` is what `entries[i]` became (empty until parsed).
    @usableFromInline var parsed: [ParsedLine] = []
    /// When the lines were read (real clock), in milliseconds since start.
    @usableFromInline
    var stamp: Int?

    /// The most bytes of lines a batch takes before it counts as full.
    @usableFromInline
    let byteBudget: Int
    /// The most lines a batch takes before it counts as full.
    @usableFromInline
    let lineBudget: Int

    /// An empty batch that is full at `lines` lines or `bytes` bytes.
    @usableFromInline
    package init(lines: Int = 512, bytes: Int = 1 << 16) {
        lineBudget = max(1, lines)
        byteBudget = max(1, bytes)
        self.bytes.reserveCapacity(byteBudget)
        entries.reserveCapacity(lineBudget)
        parsed.reserveCapacity(lineBudget)
    }

    /// A batch with no storage: a placeholder for swapping a batch in and out.
    @usableFromInline
    static var placeholder: LineBatch {
        LineBatch(lines: 1, bytes: 1, reserving: false)
    }

    private init(lines: Int, bytes: Int, reserving: Bool) {
        lineBudget = lines
        byteBudget = bytes
    }

    /// True when no line was framed into the batch.
    @usableFromInline
    package var isEmpty: Bool { entries.isEmpty }

    /// The number of lines (entries) in the batch.
    @usableFromInline
    var count: Int { entries.count }

    /// True when the batch should take no more lines. (The line that crosses the
    /// byte budget still goes in, whatever its length.)
    @inlinable
    var isFull: Bool { entries.count >= lineBudget || bytes.count >= byteBudget }

    /// Empties the batch, keeping its storage, unless a long line made it grow past
    /// twice the budget: then it goes back to the budget.
    @usableFromInline
    package mutating func reset() {
        if bytes.capacity > 2 * byteBudget {
            bytes = []
            bytes.reserveCapacity(byteBudget)
        } else {
            bytes.removeAll(keepingCapacity: true)
        }
        entries.removeAll(keepingCapacity: true)
        parsed.removeAll(keepingCapacity: true)
        stamp = nil
    }

    /// Parses every line: jansson and the protocol's field checks. Needs nothing but
    /// the batch and the decoder, so it may run on any thread.
    @usableFromInline
    mutating func decode(with decoder: CommandDecoder) {
        parsed.removeAll(keepingCapacity: true)
        bytes.withUnsafeBytes { all in
            for entry in entries {
                switch entry {
                case let .tooLong(number, limit):
                    parsed.append(.tooLong(number: number, limit: limit))
                case let .line(number, start, count):
                    parsed.append(
                        ParsedLine(
                            UnsafeRawBufferPointer(rebasing: all[start..<(start + count)]),
                            number: number, decoder: decoder))
                }
            }
        }
    }

    /// Takes parsed line `index` out of the batch, leaving a blank line in its place.
    @inlinable
    mutating func take(_ index: Int) -> ParsedLine {
        var line = ParsedLine.blank
        swap(&line, &parsed[index])
        return line
    }

    /// Calls `body` with the bytes of entry `index` (empty for a line too long).
    @inlinable
    func withLine<Result>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        guard case let .line(_, start, count) = entries[index] else {
            return body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)])) }
    }
}

/// The frame handler that collects lines into a batch, pausing the framer when the
/// batch is full.
@usableFromInline
package struct BatchCollector: FrameHandler, ~Copyable {
    @usableFromInline package var batch: LineBatch

    @inlinable
    package init(batch: consuming LineBatch) {
        self.batch = batch
    }

    @inlinable
    package mutating func handleLine(_ line: UnsafeRawBufferPointer, number: Int) {
        batch.entries.append(.line(number: number, start: batch.bytes.count, count: line.count))
        batch.bytes.append(contentsOf: line)
    }

    @inlinable
    package mutating func handleTooLong(number: Int, limit: Int) {
        batch.entries.append(.tooLong(number: number, limit: limit))
    }

    @inlinable
    package var wantsPause: Bool { batch.isFull }
}
