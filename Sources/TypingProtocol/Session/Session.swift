import TypingCore

/// A whole conversation with one client, minus the file descriptors: bytes in,
/// encoded events out to a sink the session owns.
///
/// Feed input as it arrives with ``feed(_:)``, call ``flush()`` before waiting for
/// more (output is also written whenever the ``OutputPolicy`` threshold is reached,
/// in the middle of a step if need be, so what the session holds stays bounded),
/// and ``finish()`` at the end of input. With the real clock, call ``advance(to:)``
/// with the time the input was read before feeding it (lines are applied at the
/// engine's current time), and whenever ``nextDeadline()`` passes.
///
/// A sink's failure is thrown at the end of the step it happened in; a session
/// whose sink failed writes nothing more.
///
/// ```swift
/// var session = Session(configuration: SessionConfiguration(), sink: [UInt8]())
/// let input = #"{"cmd":"join","conv":"dm","user":"ana"}"# + "\n"
/// _ = Array(input.utf8).withUnsafeBytes { session.feed($0) }
/// session.finish()
/// session.flush()
/// print(String(decoding: session.sink, as: UTF8.self))
/// ```
public struct Session<Format: EventFormat & ~Copyable, Sink: ByteSink>: ~Copyable {
    /// The settings.
    public let configuration: SessionConfiguration
    @usableFromInline package var framer: Framer
    @usableFromInline package var lines: LineProcessor<Format, Sink>

    /// Creates a session at time 0 that encodes with `format` and writes to `sink`.
    public init(configuration: SessionConfiguration, format: consuming Format, sink: Sink) {
        self.init(configuration: configuration, format: format, sink: sink, record: nil)
    }

    /// Creates a session at time 0 that encodes with `format`, writes to `sink`,
    /// and tells `observer` of each line around the engine's work on it.
    public init(configuration: SessionConfiguration, format: consuming Format, sink: Sink, observer: any LineObserver) {
        self.configuration = configuration
        framer = Framer(maxLineBytes: configuration.maxLineBytes)
        lines = LineProcessor(configuration: configuration, format: format, sink: sink, record: nil, observer: observer)
    }

    /// A session that also writes a record of its input to `record` (see
    /// ``RecordFormat``), starting with `header`.
    package init(
        configuration: SessionConfiguration, format: consuming Format, sink: Sink,
        record: (sink: Sink, header: RecordHeader)?
    ) {
        self.configuration = configuration
        framer = Framer(maxLineBytes: configuration.maxLineBytes)
        lines = LineProcessor(
            configuration: configuration, format: format, sink: sink,
            record: record.map { Recording(sink: $0.sink, policy: configuration.output, header: $0.header) })
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

    /// Writes the output that waits to the sink (and the record to its sink).
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
    public init(configuration: SessionConfiguration, sink: Sink) {
        self.init(configuration: configuration, format: JSONFormat(), sink: sink)
    }
}

// The parts the parsing threads (``InputPipeline``) and records (``RecordPlayer``)
// need: lines framed here, parsed elsewhere, applied here, or lines applied as a
// record gives them.
extension Session where Format: ~Copyable {
    /// Frames the complete lines of `chunk` into `batch`, without parsing or
    /// applying them, until the chunk is used up or the batch is full. Returns the
    /// number of bytes consumed.
    @inlinable
    mutating func frame(_ chunk: UnsafeRawBufferPointer, into batch: inout LineBatch) -> Int {
        var collector = BatchCollector(batch: .placeholder)
        swap(&collector.batch, &batch)
        let consumed = framer.feed(chunk, to: &collector)
        swap(&collector.batch, &batch)
        return consumed
    }

    /// Frames the final line without LF, if any, into `batch` (the end of input).
    @inlinable
    mutating func frameEnd(into batch: inout LineBatch) {
        var collector = BatchCollector(batch: .placeholder)
        swap(&collector.batch, &batch)
        framer.finish(to: &collector)
        swap(&collector.batch, &batch)
    }

    /// The decoder, for parsing batches on other threads.
    @inlinable
    var decoder: CommandDecoder { lines.decoder }

    /// Applies the parsed lines of `batch` in order, at the time it was read if it
    /// says (fired timeouts first), exactly as ``feed(_:)`` would have applied them.
    /// Returns how many were applied: all of them, unless the sink asked for a pause
    /// after one (see ``ByteSink/shouldPause``).
    @inlinable
    mutating func apply(_ batch: inout LineBatch) throws(Sink.Failure) -> Int {
        if let stamp = batch.stamp { try advance(to: stamp) }
        for index in batch.parsed.indices {
            // Each parsed line is taken out of the batch (left blank) and moved into
            // the engine, not copied: a `let` captured by the closure would be.
            var parsed = Optional(batch.take(index))
            batch.withLine(index) { line in
                if let taken = parsed.take() { lines.process(taken, line: line) }
            }
            if lines.wantsPause {
                try rethrow()
                return index + 1
            }
        }
        try rethrow()
        return batch.parsed.count
    }

    /// Applies line `number`, given whole (without LF or its trailing CR).
    @inlinable
    mutating func process(_ line: UnsafeRawBufferPointer, number: Int) throws(Sink.Failure) {
        lines.handleLine(line, number: number)
        try rethrow()
    }

    /// Reports line `number` as longer than `--max-line-bytes`.
    @inlinable
    mutating func processTooLong(number: Int) throws(Sink.Failure) {
        lines.handleTooLong(number: number, limit: configuration.maxLineBytes)
        try rethrow()
    }

    /// True once a write failed or the sink asks for a pause.
    package var wantsPause: Bool { lines.wantsPause }

    /// Ends the record, if one is made, at the engine's time (see ``RecordFormat``).
    package mutating func endRecord() {
        lines.recording?.recordEnd(at: lines.engine.now)
    }
}
