import TypingProtocol

/// The router's reading of its input: typingd's own framer (``Framer``), and the
/// byte positions a restart can resume at.
///
/// Lines are cut exactly as typingd cuts them (Protocol.md, "Framing: lines in,
/// lines out"): a UTF-8 byte order mark is skipped at the very start of the input
/// only; one CR before the LF is dropped; a final line without LF is a line; a line
/// longer than the limit (its CR counted) is reported once and dropped as it is
/// read, never held whole; every line counts, a too-long one too.
///
/// Positions count every byte of the input, a skipped byte order mark's too.
/// ``lineEnd`` is just after the last line ended: the only kind of place a
/// checkpoint may name.
package struct RouterInput {
    /// typingd's framer.
    var framer: Framer
    /// Input lines before the first one fed here (a checkpoint's).
    package let linesBefore: Int
    /// The input position of the next byte to feed.
    package private(set) var position: Int
    /// The input position just after the last line ended (its LF, or the input's
    /// end for a final line without one).
    package private(set) var lineEnd: Int
    /// Resumed after a line that had no LF: the input must go on with that LF
    /// (or CR LF), which ends that line and starts no line of its own.
    var awaitingLineEnd: Bool
    /// The CR of an awaited CR LF has come.
    var awaitedCR = false

    /// Reading that starts at input position `position`, after `lines` input lines;
    /// `afterLineFeed`: the byte before `position` is an LF (or there is none).
    /// A byte order mark is skipped only at position 0.
    package init(maxLineBytes: Int, position: Int = 0, lines: Int = 0, afterLineFeed: Bool = true) {
        framer = Framer(maxLineBytes: maxLineBytes, atInputStart: position == 0)
        linesBefore = lines
        self.position = position
        lineEnd = position
        awaitingLineEnd = !afterLineFeed
    }

    /// Input lines ended so far, from the input's first: those up to ``lineEnd``.
    package var lines: Int { linesBefore + framer.linesEnded }

    /// The bytes of an unfinished line held now (at most the line limit).
    package var bytesHeld: Int { framer.bytesHeld }

    /// Frames `chunk`, the input's next bytes, into `handler` until it is used up
    /// or the handler pauses; returns how many of its bytes were consumed (the
    /// rest is to be fed again). Line numbers given to `handler` count from
    /// the first line fed here (add ``linesBefore`` for the input's).
    package mutating func feed<H: FrameHandler & ~Copyable>(_ chunk: UnsafeRawBufferPointer, to handler: inout H)
        throws(RouterFailure) -> Int
    {
        var skipped = 0
        while awaitingLineEnd && skipped < chunk.count {
            let byte = chunk[skipped]
            skipped += 1
            if byte == 0x0A {
                awaitingLineEnd = false
                lineEnd = position + skipped
            } else if byte != 0x0D || awaitedCR {
                throw RouterFailure.input(Router.notALineStart)
            } else {
                awaitedCR = true
            }
        }
        position += skipped
        guard skipped < chunk.count, let base = chunk.baseAddress else { return skipped }
        let rest = UnsafeRawBufferPointer(start: base + skipped, count: chunk.count - skipped)
        let linesBefore = framer.linesEnded
        let used = framer.feed(rest, to: &handler)
        if framer.linesEnded > linesBefore {
            // Lines ended, each at an LF: the last of them ends at the last LF used.
            var last = used - 1
            while last > 0 && rest[last] != 0x0A { last -= 1 }
            lineEnd = position + last + 1
        }
        position += used
        return skipped + used
    }

    /// Ends the input: a final line without LF is handed to `handler`, and ends at
    /// the input's end.
    package mutating func finish<H: FrameHandler & ~Copyable>(to handler: inout H) {
        if awaitingLineEnd { return } // no byte, or a lone CR, after a line without LF: nothing more
        let before = framer.linesEnded
        framer.finish(to: &handler)
        if framer.linesEnded > before { lineEnd = position }
    }
}
