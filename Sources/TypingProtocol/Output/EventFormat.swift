import TypingCore

/// How events become bytes: the format seam. ``JSONFormat`` is the protocol's own;
/// another format (for people at a terminal, say) is one more conformer.
///
/// A format may keep state between events (the JSON format remembers the encoded
/// form of the last shared view, so a change seen by thousands is encoded once).
public protocol EventFormat: ~Copyable {
    /// Appends `event`, as one line ending in LF, to `buffer`.
    mutating func encode(_ event: Event, into buffer: inout OutputBuffer)

}
