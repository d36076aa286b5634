import TypingCore

/// A whole conversation with one client, minus the file descriptors: bytes in,
/// encoded events out to a sink the session owns.
///
/// Feed input as it arrives with ``feed(_:)``, call ``flush()`` before waiting for
/// more (output is also written whenever the ``OutputPolicy`` threshold is reached,
/// in the middle of a step if need be, so what the session holds stays bounded),
/// and ``finish()`` at the end of input. In real clock mode, call ``advance(to:)``
/// with the time the input was read before feeding it (lines are applied at the
/// engine's current time), and whenever a deadline passes.
///
/// A sink's failure is thrown at the end of the step it happened in; a session
/// whose sink failed writes nothing more.
public struct Session<Format: EventFormat & ~Copyable, Sink: ByteSink>: ~Copyable {
    /// The settings.
    public let configuration: SessionConfiguration
    @usableFromInline var framer: Framer
    @usableFromInline var lines: LineProcessor<Format, Sink>

    /// Creates a session at time 0 that encodes with `format` and writes to `sink`;
    /// with `record`, it also writes there every line as applied (see ``Recording``).
    public init(configuration: SessionConfiguration, format: consuming Format, sink: Sink, record: Sink? = nil) {
        self.configuration = configuration
        framer = Framer(maxLineBytes: configuration.maxLineBytes)
        lines = LineProcessor(configuration: configuration, format: format, sink: sink, record: record)
    }

    /// Processes the complete lines of `chunk` (a partial last line waits for more
    /// input). Returns the number of bytes consumed: all of them, unless the sink
    /// asked for a pause after some line (see ``ByteSink/shouldPause``).
    @inlinable
    public mutating func feed(_ chunk: UnsafeRawBufferPointer) throws(Sink.Failure) -> Int {
        let consumed = framer.feed(chunk, to: &lines)
        try rethrow()
        return consumed
    }

    /// Ends the input: processes a final line without LF, then, unless draining is
    /// off or the clock is real (the caller then waits for ``nextDeadline()``),
    /// fires every remaining timeout at its deadline.
    @inlinable
    public mutating func finish() throws(Sink.Failure) {
        framer.finish(to: &lines)
        if configuration.drain && configuration.clock == .manual {
            lines.engine.drain(sink: &lines.output)
        }
        try rethrow()
    }

    /// Fires the timeouts due by `time` and moves the clock there.
    @inlinable
    public mutating func advance(to time: Int) throws(Sink.Failure) {
        lines.engine.advance(to: time, sink: &lines.output)
        try rethrow()
    }

    /// Writes the output that waits to the sink (and the recording to its sink).
    @inlinable
    public mutating func flush() throws(Sink.Failure) {
        lines.output.flush()
        lines.recording?.flush()
        if let failure = lines.recording?.failure, lines.output.failure == nil { lines.output.failure = failure }
        try rethrow()
    }

    /// The deadline of the next timeout, if any streak is active.
    @inlinable
    public mutating func nextDeadline() -> Int? {
        lines.engine.nextDeadline()
    }

    /// The number of bytes of output not yet written to the sink.
    @inlinable
    public var pendingOutputCount: Int { lines.output.buffer.count }

    /// The sink.
    @inlinable
    public var sink: Sink { lines.output.sink }

    /// The engine, for inspection.
    @inlinable
    public var engine: Engine {
        _read { yield lines.engine }
    }

    /// Throws the sink's first failure, if any.
    @inlinable
    func rethrow() throws(Sink.Failure) {
        if let failure = lines.output.failure { throw failure }
    }
}

extension Session where Format == JSONFormat {
    /// A session that writes the protocol's JSON to `sink`.
    public init(configuration: SessionConfiguration, sink: Sink, record: Sink? = nil) {
        self.init(configuration: configuration, format: JSONFormat(), sink: sink, record: record)
    }
}
