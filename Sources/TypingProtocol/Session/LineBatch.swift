import TypingCore

/// A batch of framed input lines, and what decoding made of each: the unit that
/// moves between threads when typingd parses on several cores and applies on one.
///
/// The session frames lines into a batch (``Session/frame(_:into:)``), any thread
/// decodes it (``decode(with:)``: jansson and the field checks, the costly part,
/// which needs no engine), and the session applies the decoded lines in order
/// (``Session/apply(_:)``), exactly as it would have applied them one by one: the
/// output is the same, byte for byte. A batch keeps its storage when it is reset,
/// so batches that go round a ring allocate nothing once warm.
public struct LineBatch: Sendable {
    /// What framing found at one place of the input.
    enum Entry: Sendable {
        /// A line (without LF or one trailing CR), at `start ..< start + count` in `bytes`.
        case line(number: Int, start: Int, count: Int)
        /// A line over the limit (its bytes are skipped, not kept).
        case tooLong(number: Int, limit: Int)
    }

    /// What decoding made of a line.
    enum Decoded: Sendable {
        case blank
        case request(Request)
        case refused(Event.Error)
        case tooLong(number: Int, limit: Int)
    }

    /// The bytes of the lines, back to back.
    var bytes: [UInt8] = []
    var entries: [Entry] = []
    /// `decoded[i]` is what `entries[i]` became (empty until decoded).
    var decoded: [Decoded] = []
    /// When the lines were read (real clock), in milliseconds since start.
    public var stamp: Int?

    /// The most bytes of lines a batch takes before it counts as full.
    public var byteBudget: Int
    /// The most lines a batch takes before it counts as full.
    public var lineBudget: Int

    /// An empty batch that is full at `lines` lines or `bytes` bytes.
    public init(lines: Int = 512, bytes: Int = 1 << 16) {
        lineBudget = max(1, lines)
        byteBudget = max(1, bytes)
        self.bytes.reserveCapacity(byteBudget)
        entries.reserveCapacity(lineBudget)
        decoded.reserveCapacity(lineBudget)
    }

    /// A batch with no storage: a placeholder for swapping a batch in and out.
    static var placeholder: LineBatch {
        var batch = LineBatch(lines: 1, bytes: 1, reserving: false)
        batch.lineBudget = 1
        return batch
    }

    private init(lines: Int, bytes: Int, reserving: Bool) {
        lineBudget = lines
        byteBudget = bytes
    }

    /// True when no line was framed into the batch.
    public var isEmpty: Bool { entries.isEmpty }

    /// The number of lines (entries) in the batch.
    public var count: Int { entries.count }

    /// True when the batch should take no more lines.
    public var isFull: Bool { entries.count >= lineBudget || bytes.count >= byteBudget }

    /// True when every line is decoded.
    public var isDecoded: Bool { decoded.count == entries.count }

    /// Empties the batch, keeping its storage.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
        decoded.removeAll(keepingCapacity: true)
        stamp = nil
    }

    /// Decodes every line: jansson and the protocol's field checks. Needs nothing but
    /// the batch and the decoder, so it may run on any thread.
    package mutating func decode(with decoder: CommandDecoder) {
        decoded.removeAll(keepingCapacity: true)
        bytes.withUnsafeBytes { all in
            for entry in entries {
                switch entry {
                case let .tooLong(number, limit):
                    decoded.append(.tooLong(number: number, limit: limit))
                case let .line(number, start, count):
                    let line = UnsafeRawBufferPointer(rebasing: all[start..<(start + count)])
                    if LineProcessor<JSONFormat, [UInt8]>.isBlank(line) {
                        decoded.append(.blank)
                        continue
                    }
                    do throws(Event.Error) {
                        decoded.append(.request(try decoder.decode(line, number: number)))
                    } catch {
                        decoded.append(.refused(error))
                    }
                }
            }
        }
    }

    /// Calls `body` with the bytes of line entry `index`.
    func withLine<Result>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        guard case let .line(_, start, count) = entries[index] else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)])) }
    }
}

/// The frame handler that collects lines into a batch, pausing the framer when the
/// batch is full.
struct BatchCollector: FrameHandler, ~Copyable {
    var batch: LineBatch

    mutating func handleLine(_ line: UnsafeRawBufferPointer, number: Int) {
        batch.entries.append(.line(number: number, start: batch.bytes.count, count: line.count))
        batch.bytes.append(contentsOf: line)
    }

    mutating func handleTooLong(number: Int, limit: Int) {
        batch.entries.append(.tooLong(number: number, limit: limit))
    }

    var wantsPause: Bool { batch.isFull }
}
