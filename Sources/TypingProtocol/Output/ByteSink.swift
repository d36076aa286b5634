import TypingCore

/// Where a ``Session`` writes its encoded output: the daemon's stdout, a test's
/// byte array. The one output seam of the protocol layer.
///
/// A sink that fails throws its own typed error; the session stops at the end of
/// the step it was in and rethrows it (a step cannot be half applied).
public protocol ByteSink {
    /// What a failed write throws (`Never` for a sink that cannot fail).
    associatedtype Failure: Error

    /// Takes all of `bytes` (valid only during the call), blocking as long as it
    /// needs to.
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws(Failure)

    /// True when the producer should stop after the current line and return to
    /// its caller (the daemon's stdout sink says so once a signal has arrived).
    var shouldPause: Bool { get }
}

extension ByteSink {
    /// Never pauses.
    public var shouldPause: Bool { false }
}

extension Array: ByteSink where Element == UInt8 {
    /// Appends the bytes.
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {
        append(contentsOf: bytes)
    }
}

/// How much output a session holds before writing it to its sink.
public struct OutputPolicy: Sendable, Equatable {
    /// Output is written to the sink once this many bytes wait, also in the middle
    /// of a step (a change in a room of thousands can produce megabytes): what a
    /// session holds is at most this plus one event.
    public var flushThreshold: Int

    /// The daemon's policy: 256 KiB.
    public init(flushThreshold: Int = 1 << 18) {
        self.flushThreshold = max(1, flushThreshold)
    }
}

/// The engine's event sink inside a session: encodes each event with the format
/// into the buffer, and writes the buffer to the sink whenever the policy says.
/// After a write fails, it keeps the first error and drops further output.
@usableFromInline
struct Output<Format: EventFormat & ~Copyable, Sink: ByteSink>: EventSink, ~Copyable {
    @usableFromInline var format: Format
    @usableFromInline var buffer = OutputBuffer()
    @usableFromInline var sink: Sink
    @usableFromInline let policy: OutputPolicy
    /// The first write error.
    @usableFromInline var failure: Sink.Failure?

    @usableFromInline
    init(format: consuming Format, sink: Sink, policy: OutputPolicy) {
        self.format = format
        self.sink = sink
        self.policy = policy
    }

    @inlinable
    mutating func emit(_ event: Event) {
        guard failure == nil else { return }
        format.encode(event, into: &buffer)
        if buffer.count >= policy.flushThreshold { flush() }
    }

    /// Writes what the buffer holds. (Specialized, but out of line: it is rare on
    /// the hot path, and inlined at each of its callers it crowds the instruction
    /// cache.)
    @inlinable @inline(never)
    mutating func flush() {
        guard failure == nil, buffer.count > 0 else { return }
        do {
            try buffer.withBytes { bytes throws(Sink.Failure) in try sink.write(bytes) }
        } catch {
            failure = error
        }
        buffer.removeAll()
    }
}
