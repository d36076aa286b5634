import TypingCore

/// Turns framed lines into engine steps and encoded output.
///
/// Blank lines (only spaces and tabs) are skipped; every other line is decoded,
/// and either applied or answered with its error. All events, errors included,
/// go through the engine so that `stats` counts them.
@usableFromInline
struct LineProcessor<Format: EventFormat & ~Copyable, Sink: ByteSink>: FrameHandler, ~Copyable {
    @usableFromInline let decoder: CommandDecoder
    @usableFromInline var engine: Engine
    @usableFromInline var output: Output<Format, Sink>
    @usableFromInline let checksInvariants: Bool
    /// The recording of the lines as applied (see ``Recording``), if any.
    @usableFromInline var recording: Recording<Sink>?

    @usableFromInline
    init(configuration: SessionConfiguration, format: consuming Format, sink: Sink, record: Sink?) {
        decoder = CommandDecoder(clock: configuration.clock)
        engine = Engine(configuration: configuration.engine)
        output = Output(format: format, sink: sink, policy: configuration.output)
        checksInvariants = configuration.checksInvariants
        recording = record.map { Recording(sink: $0, policy: configuration.output) }
    }

    /// Stop after a line once a write failed or the sink asks for a pause.
    @inlinable
    var wantsPause: Bool { output.failure != nil || output.sink.shouldPause }

    @inlinable
    mutating func handleLine(_ bytes: UnsafeRawBufferPointer, number: Int) {
        if LineProcessor.isBlank(bytes) {
            recording?.recordBlank()
            return
        }
        do {
            let request = try decoder.decode(bytes, number: number)
            engine.apply(request, to: &output)
            recording?.recordApplied(bytes, at: engine.now)
        } catch {
            engine.reject(error, to: &output)
            recording?.recordRefused(bytes, error)
        }
        if let failure = recording?.failure, output.failure == nil { output.failure = failure }
        if checksInvariants { engine.checkInvariants() }
    }

    @usableFromInline
    mutating func handleTooLong(number: Int, limit: Int) {
        engine.reject(Event.Error(
            line: number, code: .lineTooLong,
            message: "line \(number) is longer than \(limit) bytes (--max-line-bytes); it was skipped"),
            to: &output)
        recording?.recordTooLong(limit: limit)
    }

    /// True for a line of only spaces and tabs (or nothing).
    @inlinable
    static func isBlank(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }
}
