import TypingCore

/// A whole conversation with one client, minus the file descriptors: bytes in,
/// encoded events out.
///
/// Feed it input as it arrives with ``feed(_:)`` (which may stop early, once
/// ``SessionConfiguration/outputLimit`` bytes of output wait: take the output and
/// feed the rest), take the output with ``takeOutput(_:)`` before waiting for
/// more, and call ``finish()`` at the end of input. In real clock mode, call
/// ``advance(to:)`` with the time the input was read before feeding it (lines are
/// applied at the engine's current time), and whenever a deadline passes.
public struct Session {
    /// The settings.
    public let configuration: SessionConfiguration
    var framer: Framer
    var processor: LineProcessor

    /// Creates a session at time 0.
    public init(configuration: SessionConfiguration) {
        self.configuration = configuration
        framer = Framer(maxLineBytes: configuration.maxLineBytes)
        processor = LineProcessor(configuration: configuration)
    }

    /// Processes the complete lines of `chunk` (a partial last line waits for more
    /// input) until the chunk is used up or the output reaches the limit. Returns
    /// the number of bytes consumed.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer) -> Int {
        framer.feed(chunk, to: &processor)
    }

    /// Ends the input: processes a final line without LF, then, unless draining is
    /// off or the clock is real (the caller then waits for ``nextDeadline()``),
    /// fires every remaining timeout at its deadline.
    public mutating func finish() {
        framer.finish(to: &processor)
        if configuration.drain && configuration.clock == .manual {
            processor.engine.drain(sink: &processor.encoder)
        }
    }

    /// Fires the timeouts due by `time` and moves the clock there.
    public mutating func advance(to time: Int) {
        processor.engine.advance(to: time, sink: &processor.encoder)
    }

    /// The deadline of the next timeout, if any streak is active.
    public mutating func nextDeadline() -> Int? {
        processor.engine.nextDeadline()
    }

    /// Installs where output goes when a single step produces more than
    /// `threshold` bytes (see ``EventEncoder/spill``); output between steps is
    /// still taken with ``takeOutput(_:)``.
    public mutating func spillOutput(over threshold: Int, to handler: @escaping (UnsafeRawBufferPointer) -> Void) {
        processor.encoder.spillThreshold = threshold
        processor.encoder.spill = handler
    }

    /// The number of bytes of output waiting to be taken.
    public var pendingOutputCount: Int { processor.encoder.output.buffer.count }

    /// Hands the waiting output to `body` and then forgets it (even if `body` throws).
    public mutating func takeOutput<E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> Void) throws(E) {
        let buffer = processor.encoder.output.buffer
        defer { buffer.removeAll() }
        try body(buffer.bytes)
    }

    /// The engine, for inspection.
    public var engine: Engine { processor.engine }
}
