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

    /// Frames the complete lines of `chunk` into `batch`, without decoding or
    /// applying them, until the chunk is used up or the batch is full. Returns the
    /// number of bytes consumed. See ``LineBatch`` for the threads this is for.
    public mutating func frame(_ chunk: UnsafeRawBufferPointer, into batch: inout LineBatch) -> Int {
        var collector = BatchCollector(batch: .placeholder)
        swap(&collector.batch, &batch)
        let consumed = framer.feed(chunk, to: &collector)
        swap(&collector.batch, &batch)
        return consumed
    }

    /// Frames the final line without LF, if any, into `batch` (the end of input).
    public mutating func frameEnd(into batch: inout LineBatch) {
        var collector = BatchCollector(batch: .placeholder)
        swap(&collector.batch, &batch)
        framer.finish(to: &collector)
        swap(&collector.batch, &batch)
    }

    /// The decoder, for decoding batches on other threads.
    package var decoder: CommandDecoder { lines.decoder }

    /// Applies the decoded lines of `batch`, in order, exactly as ``feed(_:)`` would
    /// have applied them. Returns how many were applied: all of them, unless the
    /// sink asked for a pause after one (see ``ByteSink/shouldPause``).
    public mutating func apply(_ batch: borrowing LineBatch) throws(Sink.Failure) -> Int {
        for index in batch.decoded.indices {
            switch batch.decoded[index] {
            case .blank:
                lines.recording?.recordBlank()
            case .request(let request):
                lines.engine.apply(request, to: &lines.output)
                if lines.recording != nil {
                    let now = lines.engine.now
                    batch.withLine(index) { lines.recording?.recordApplied($0, at: now) }
                }
            case .refused(let error):
                lines.engine.reject(error, to: &lines.output)
                if lines.recording != nil { batch.withLine(index) { lines.recording?.recordRefused($0, error) } }
            case let .tooLong(number, limit):
                lines.handleTooLong(number: number, limit: limit)
            }
            if let failure = lines.recording?.failure, lines.output.failure == nil { lines.output.failure = failure }
            if lines.checksInvariants { lines.engine.checkInvariants() }
            if lines.wantsPause {
                try rethrow()
                return index + 1
            }
        }
        try rethrow()
        return batch.decoded.count
    }

    /// Ends the input: processes a final line without LF, then drains (see
    /// ``drainIfManual()``).
    @inlinable
    public mutating func finish() throws(Sink.Failure) {
        framer.finish(to: &lines)
        try drainIfManual()
    }

    /// Unless draining is off or the clock is real (the caller then waits for
    /// ``nextDeadline()``), fires every remaining timeout at its deadline.
    @inlinable
    public mutating func drainIfManual() throws(Sink.Failure) {
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
