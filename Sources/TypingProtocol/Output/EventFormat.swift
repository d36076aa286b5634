import TypingCore

/// How events become bytes: the format seam. ``JSONFormat`` is the protocol's own;
/// another format (for people at a terminal, say) is one more conformer.
///
/// A format may keep state between events (the JSON format remembers the encoded
/// form of the last shared view, so a change seen by thousands is encoded once).
public protocol EventFormat: ~Copyable {
    /// Appends `event`, as one line ending in LF, to `buffer`.
    mutating func encode(_ event: Event, into buffer: inout OutputBuffer)

    /// Whether ``lineEnded(_:)`` is called after every input line (false by
    /// default: nothing is copied or called for a format that does not look).
    static var observesLines: Bool { get }

    /// Called after each non-blank input line was applied (its events encoded):
    /// the line's command as the decoder read it, or nil for a line that was
    /// refused before reaching the engine (its error encoded). For a format that
    /// keeps per-line state (typingd-cluster's catch-up), so that it need not read
    /// the line again.
    mutating func lineEnded(_ command: Command?)
}

extension EventFormat where Self: ~Copyable {
    @inlinable
    public static var observesLines: Bool { false }

    @inlinable
    public mutating func lineEnded(_ command: Command?) {}
}
