/// Receives the lines a ``Framer`` cuts from the input.
public protocol FrameHandler: ~Copyable {
    /// A complete line, without its LF and without one trailing CR. The bytes are
    /// only valid during the call.
    mutating func handleLine(_ bytes: UnsafeRawBufferPointer, number: Int)
    /// Line `number` is longer than the limit; its bytes are being skipped.
    mutating func handleTooLong(number: Int, limit: Int)
    /// True when the framer should stop after the current line and return.
    var wantsPause: Bool { get }
}

/// Cuts a byte stream into numbered lines, as Protocol.md#framing-lines-in-lines-out
/// says.
///
/// Lines end at LF; one CR before the LF is dropped; a final line without LF still
/// counts. A line longer than ``maxLineBytes`` (counted with its CR) is reported
/// once, as soon as it is known to be too long, and its bytes are dropped up to the
/// next LF: it is never held whole in memory. Lines that fit in a chunk are handed
/// over in place; only a line split between chunks is copied.
///
/// typingd's sessions frame their input with it, and so can a program that reads
/// typingd's input before typingd does (a router in front of several typingd
/// processes): one framing for every program that reads typingd's input.
public struct Framer {
    /// The longest line accepted, in bytes, CR included, LF not.
    public let maxLineBytes: Int
    /// Lines completed so far (the number of the last line handed over).
    @usableFromInline var lineCount = 0

    /// The start of a line whose LF has not arrived yet.
    @usableFromInline package var pending: [UInt8] = []
    /// True while skipping the rest of a line already reported too long.
    @usableFromInline var skipping = false
    /// How many bytes of a UTF-8 byte order mark the input has started with, while
    /// it is undecided whether it starts with one; nil once decided
    /// (Protocol.md#framing-lines-in-lines-out).
    @usableFromInline var byteOrderMarkSeen: Int? = 0
    /// The UTF-8 byte order mark, skipped at the very start of the input.
    @usableFromInline static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Creates a framer for lines of at most `maxLineBytes` bytes (at least 1).
    /// `atInputStart`: the first byte fed is the input's very first, where a byte
    /// order mark is skipped; false for input resumed in its middle (at the start
    /// of a line), where a mark is part of its line.
    public init(maxLineBytes: Int, atInputStart: Bool = true) {
        self.maxLineBytes = max(1, maxLineBytes)
        if !atInputStart { byteOrderMarkSeen = nil }
    }

    /// The number of lines ended so far (each at its LF, or at the end of the input
    /// for a final line without one), too-long lines included.
    public var linesEnded: Int { lineCount }

    /// The bytes of the line being read that are held until its LF comes: at most
    /// ``maxLineBytes`` (nothing of a line known to be too long).
    public var bytesHeld: Int { pending.count }

    /// Cuts `chunk` into lines and hands each complete one to `handler`, until
    /// the chunk is used up or the handler ``FrameHandler/wantsPause``. Returns
    /// how many bytes of `chunk` were consumed; the caller feeds the rest later.
    @inlinable
    public mutating func feed<H: FrameHandler & ~Copyable>(_ chunk: UnsafeRawBufferPointer, to handler: inout H) -> Int
    {
        guard let base = chunk.baseAddress else { return 0 }
        var start = 0
        let end = chunk.count
        if byteOrderMarkSeen != nil {
            guard let skipped = skipByteOrderMark(chunk) else { return end }
            start = skipped
        }
        while start < end {
            let rest = UnsafeRawBufferPointer(start: base + start, count: end - start)
            guard let lf = Bytes.firstIndex(of: 0x0A, in: rest) else {
                take(rest, to: &handler)
                return end
            }
            finishLine(UnsafeRawBufferPointer(start: base + start, count: lf), to: &handler)
            start += lf + 1
            if handler.wantsPause { return start }
        }
        return end
    }

    /// At the start of the input: consumes the bytes of `chunk` that continue a byte
    /// order mark, and returns where the input proper starts in it, or nil when
    /// the whole chunk is the start of a mark (still undecided). Bytes that looked
    /// like a mark but were not are kept as the start of line 1.
    @usableFromInline
    mutating func skipByteOrderMark(_ chunk: UnsafeRawBufferPointer) -> Int? {
        let before = byteOrderMarkSeen ?? 0
        var seen = before, index = 0
        while index < chunk.count && seen < 3 && chunk[index] == Framer.byteOrderMark[seen] {
            seen += 1
            index += 1
        }
        if seen == 3 {
            byteOrderMarkSeen = nil
            return index
        }
        if index == chunk.count {
            byteOrderMarkSeen = seen
            return nil
        }
        byteOrderMarkSeen = nil
        pending.append(contentsOf: Framer.byteOrderMark[0..<before])
        return 0
    }

    /// Ends the input: a final line without LF, if any, is handed over.
    @inlinable
    public mutating func finish<H: FrameHandler & ~Copyable>(to handler: inout H) {
        if let seen = byteOrderMarkSeen {
            // The input ended inside what might have been a byte order mark.
            pending.append(contentsOf: Framer.byteOrderMark[0..<seen])
            byteOrderMarkSeen = nil
        }
        if skipping {
            skipping = false
            lineCount += 1
        } else if !pending.isEmpty {
            lineCount += 1
            pending.withUnsafeBytes { deliver($0, to: &handler) }
            pending.removeAll(keepingCapacity: false)
        }
    }

    /// Keeps `part`, the start of a line whose end is in a later chunk.
    @inlinable
    mutating func take<H: FrameHandler & ~Copyable>(_ part: UnsafeRawBufferPointer, to handler: inout H) {
        if skipping { return }
        if pending.count + part.count > maxLineBytes {
            startSkipping(to: &handler)
            return
        }
        pending.append(contentsOf: part)
    }

    /// `part` ends a line (its LF follows it).
    @inlinable
    mutating func finishLine<H: FrameHandler & ~Copyable>(_ part: UnsafeRawBufferPointer, to handler: inout H) {
        if skipping {
            skipping = false
            lineCount += 1
            return
        }
        if pending.count + part.count > maxLineBytes {
            startSkipping(to: &handler)
            skipping = false
            lineCount += 1
            return
        }
        lineCount += 1
        if pending.isEmpty {
            deliver(part, to: &handler)
        } else {
            pending.append(contentsOf: part)
            pending.withUnsafeBytes { deliver($0, to: &handler) }
            pending.removeAll(keepingCapacity: pending.capacity <= 65_536)
        }
    }

    /// Reports the current line as too long and drops what was kept of it.
    @inlinable
    mutating func startSkipping<H: FrameHandler & ~Copyable>(to handler: inout H) {
        pending.removeAll(keepingCapacity: false)
        skipping = true
        handler.handleTooLong(number: lineCount + 1, limit: maxLineBytes)
    }

    /// Hands a complete line to `handler`, dropping one trailing CR.
    @inlinable
    func deliver<H: FrameHandler & ~Copyable>(_ line: UnsafeRawBufferPointer, to handler: inout H) {
        var count = line.count
        if count > 0 && line[count - 1] == 0x0D { count -= 1 }
        handler.handleLine(UnsafeRawBufferPointer(rebasing: line[0..<count]), number: lineCount)
    }
}
