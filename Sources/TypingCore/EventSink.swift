/// Where the engine puts the events it produces, in order.
///
/// The daemon's sink encodes each event straight into its output buffer; tests use
/// an array of events.
public protocol EventSink {
    /// Receives the next event.
    mutating func emit(_ event: Event)
}

extension Array: EventSink where Element == Event {
    /// Appends the event.
    public mutating func emit(_ event: Event) {
        append(event)
    }
}
