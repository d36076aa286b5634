import TypingCore

/// How events become bytes: the format seam. ``JSONFormat`` is the protocol's own;
/// another format (for people at a terminal, say) is one more conformer.
///
/// A format may keep state between events (the JSON format remembers the encoded
/// form of the last shared view, so a change seen by thousands is encoded once).
public protocol EventFormat: ~Copyable {
    /// Appends `event`, as one line ending in LF, to `buffer`.
    mutating func encode(_ event: Event, into buffer: inout OutputBuffer)

    /// Whether ``lineBegins(_:)`` and ``lineEnded()`` are called around every
    /// input line (false by default: nothing is called for a format that does
    /// not look).
    static var observesLines: Bool { get }

    /// Called before the engine applies a line's command (the command as the
    /// decoder read it, lent: a format copies only what it keeps), once the
    /// timeouts and announcements due by the command's time have fired and
    /// written their events. Not called for a line refused before reaching the
    /// engine. For a format that keeps
    /// per-line state (typingd-cluster's catch-up), so that it need not read the
    /// line again.
    mutating func lineBegins(_ command: Command)

    /// Called after each non-blank input line: applied (its events encoded,
    /// after ``lineBegins(_:)``), or refused (its error encoded).
    mutating func lineEnded()
}

extension EventFormat where Self: ~Copyable {
    @inlinable
    public static var observesLines: Bool { false }

    @inlinable
    public mutating func lineBegins(_ command: Command) {}

    @inlinable
    public mutating func lineEnded() {}
}
