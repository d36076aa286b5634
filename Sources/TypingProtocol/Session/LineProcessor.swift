import TypingCore

/// Turns framed lines into engine steps and encoded output: the one place a parsed
/// line meets the engine, for lines framed and parsed here and for batches parsed
/// in a ``ParsingPool`` alike.
///
/// Blank lines (only spaces and tabs) are skipped; every other line is parsed, and
/// either applied or answered with its error. All events, errors included, go
/// through the engine so that `stats` counts them.
@usableFromInline
package struct LineProcessor<Format: EventFormat & ~Copyable, Sink: ByteSink>: FrameHandler, ~Copyable {
    @usableFromInline let decoder: CommandDecoder
    @usableFromInline var engine: Engine
    @usableFromInline var output: Output<Format, Sink>
    @usableFromInline let checksInvariants: Bool
    /// The recording of the lines as applied (see ``Recording``), if any.
    @usableFromInline package var recording: Recording<Sink>?
    /// Hears of each line around the engine's work, if any.
    @usableFromInline var observer: (any LineObserver)?

    @usableFromInline
    init(
        configuration: SessionConfiguration, format: consuming Format, sink: Sink, record: Recording<Sink>?,
        observer: (any LineObserver)? = nil
    ) {
        decoder = CommandDecoder(clock: configuration.clock)
        engine = Engine(configuration: configuration.engine)
        output = Output(format: format, sink: sink, policy: configuration.output)
        checksInvariants = configuration.checksInvariants
        recording = record
        self.observer = observer
    }

    /// Stop after a line once a write failed or the sink asks for a pause.
    @inlinable
    package var wantsPause: Bool { output.failure != nil || output.sink.shouldPause }

    @inlinable
    package mutating func handleLine(_ bytes: UnsafeRawBufferPointer, number: Int) {
        process(ParsedLine(bytes, number: number, decoder: decoder), line: bytes)
    }

    @inlinable
    package mutating func handleTooLong(number: Int, limit: Int) {
        process(.tooLong(number: number, limit: limit), line: UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// Applies one parsed line (`line` holds its bytes, for the recording) at the
    /// engine's current time. The line is consumed: its request goes to the engine
    /// without a copy.
    @inlinable
    mutating func process(_ parsed: consuming ParsedLine, line: UnsafeRawBufferPointer) {
        let time = engine.now
        var tooLong = false
        switch consume parsed {
        case .blank:
            break
        case .request(let request):
            if observer != nil {
                // The timeouts and announcements due by the command's time fire
                // before the observer hears of the command: what they write is for
                // the screens as they were before it (applying it then fires
                // nothing more). A time the engine refuses fires nothing here.
                let due = request.at ?? engine.now
                if (0...Engine.maxTime).contains(due) { engine.advance(to: due, sink: &output) }
                observer?.lineBegins(request.command)
                engine.apply(consume request, to: &output)
                observer?.lineEnded()
            } else {
                engine.apply(consume request, to: &output)
            }
        case .refused(let error):
            engine.reject(error, to: &output)
            observer?.lineEnded()
        case let .tooLong(number, limit):
            tooLong = true
            engine.reject(ParsedLine.tooLongError(number: number, limit: limit), to: &output)
            observer?.lineEnded()
        }
        if recording != nil { record(line, tooLong: tooLong, at: time) }
        if checksInvariants { checkEngine() }
    }

    /// Checks the engine's invariants (in builds with the checker; see Package.swift).
    @usableFromInline
    func checkEngine() {
        #if TYPINGD_INTERNAL_CHECKS
        engine.checkInvariants()
        #endif
    }

    /// Records a line, and makes a failure of the record's sink the session's.
    @usableFromInline
    mutating func record(_ line: UnsafeRawBufferPointer, tooLong: Bool, at time: Int) {
        if tooLong {
            recording?.recordTooLong(at: time)
        } else {
            recording?.record(line, at: time)
        }
        if let failure = recording?.failure, output.failure == nil { output.failure = failure }
    }
}
