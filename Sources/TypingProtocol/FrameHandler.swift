/// Receives the lines a ``Framer`` cuts from the input.
public protocol FrameHandler {
    /// A complete line, without its LF and without one trailing CR. The bytes are
    /// only valid during the call.
    mutating func handleLine(_ bytes: UnsafeRawBufferPointer, number: Int)
    /// Line `number` is longer than the limit; its bytes are being skipped.
    mutating func handleTooLong(number: Int, limit: Int)
    /// True when the framer should stop after the current line and return, so
    /// the caller can write out what the lines produced.
    var wantsPause: Bool { get }
}
