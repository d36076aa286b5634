import TypingCore

/// Hears of each input line a ``Session`` applies, around the engine's work on it:
/// for a program that keeps per-line state next to the session's output (which
/// indicators a line's command leaves on which screen, say) without reading the
/// line again.
///
/// A session made without an observer pays one check per line for the seam.
///
/// ```swift
/// final class Counter: LineObserver {
///     var commands = 0
///     func lineBegins(_ command: Command) { commands += 1 }
///     func lineEnded() {}
/// }
/// let counter = Counter()
/// var session = Session(configuration: SessionConfiguration(), format: JSONFormat(),
///                       sink: [UInt8](), observer: counter)
/// ```
public protocol LineObserver {
    /// Called before the engine applies a line's command (the command as the
    /// decoder read it), once the timeouts and announcements due by the command's
    /// time have fired and written their events: what they wrote is for the
    /// screens as they were before the command. Not called for a line refused
    /// before reaching the engine.
    mutating func lineBegins(_ command: Command)

    /// Called after each non-blank input line: applied (its events written, after
    /// ``lineBegins(_:)``), or refused (its error written).
    mutating func lineEnded()
}
