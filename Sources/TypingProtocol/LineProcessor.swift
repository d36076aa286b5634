import TypingCore

/// Turns framed lines into engine steps and encoded events.
///
/// Blank lines (only spaces and tabs) are skipped; every other line is decoded,
/// and either applied or answered with its error. All events, errors included,
/// go through the engine so that `stats` counts them.
struct LineProcessor: FrameHandler {
    /// The decoder.
    let decoder: CommandDecoder
    /// The engine.
    var engine: Engine
    /// The encoder holding the output not yet written.
    var encoder = EventEncoder()
    /// Feeding pauses once this much output is waiting.
    let outputLimit: Int

    var wantsPause: Bool { encoder.output.buffer.count >= outputLimit }

    /// Creates a processor.
    init(configuration: SessionConfiguration) {
        decoder = CommandDecoder(clock: configuration.clock)
        engine = Engine(configuration: configuration.engine)
        outputLimit = configuration.outputLimit
    }

    mutating func handleLine(_ bytes: UnsafeRawBufferPointer, number: Int) {
        if LineProcessor.isBlank(bytes) { return }
        do {
            let request = try decoder.decode(bytes, number: number)
            engine.apply(request, to: &encoder)
        } catch {
            engine.reject(error, to: &encoder)
        }
    }

    mutating func handleTooLong(number: Int, limit: Int) {
        engine.reject(ErrorReport(
            line: number, code: .lineTooLong,
            message: "line \(number) is longer than \(limit) bytes (--max-line-bytes); it was skipped"),
            to: &encoder)
    }

    /// True for a line of only spaces and tabs (or nothing).
    static func isBlank(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }
}
