import TypingCore

/// `--record`: every input line of a real-clock session, written as it is applied,
/// so that `typingd --clock manual [same options] < FILE` reproduces the session's
/// output byte for byte, error events and line numbers included. Each line is
/// recorded as one line, so line numbers stay the same:
///
/// - a command that was applied (or refused for membership or a limit, which also
///   happens at its time) gets the time it was applied at, as `"at"`, first in its
///   object: `{"at":1234,"cmd":"type",…}`;
/// - a blank line, and a line refused before it was applied (bad JSON, a bad field,
///   an unknown command), is recorded as it was: it is refused the same way;
/// - a line longer than `--max-line-bytes` is recorded as a line of spaces one byte
///   over the limit: refused the same way, without keeping the original;
/// - a line refused with `clock_mode` (it carried `at`, or was `tick`) cannot be
///   refused that way by the manual clock; it is recorded as a `tick` with a bad
///   `at` (and the line's `id`), which the replay refuses with `bad_field` instead,
///   changing nothing else.
///
/// Timeouts are not recorded: the replay fires them at the same deadlines.
@usableFromInline
struct Recording<Sink: ByteSink> {
    @usableFromInline var sink: Sink
    @usableFromInline var buffer: [UInt8] = []
    @usableFromInline let policy: OutputPolicy
    /// The first write error.
    @usableFromInline var failure: Sink.Failure?

    @usableFromInline
    init(sink: Sink, policy: OutputPolicy) {
        self.sink = sink
        self.policy = policy
        buffer.reserveCapacity(4096)
    }

    @usableFromInline
    mutating func recordBlank() {
        buffer.append(0x0A)
        flushIfFull()
    }

    /// A command that went to the engine, which applied it at `time`.
    @usableFromInline
    mutating func recordApplied(_ line: UnsafeRawBufferPointer, at time: Int) {
        // The line decoded as an object: its first byte that is not white space is `{`.
        guard let brace = line.firstIndex(of: UInt8(ascii: "{")) else { return recordAsIs(line) }
        buffer.append(contentsOf: line[...brace])
        buffer.append(contentsOf: "\"at\":\(time),".utf8)
        buffer.append(contentsOf: line[(brace + 1)...])
        buffer.append(0x0A)
        flushIfFull()
    }

    /// A line the decoder refused with `error`.
    @usableFromInline
    mutating func recordRefused(_ line: UnsafeRawBufferPointer, _ error: Event.Error) {
        guard error.code == .clockMode else { return recordAsIs(line) }
        buffer.append(contentsOf: #"{"cmd":"tick","at":"recorded from a line refused with clock_mode""#.utf8)
        if let id = error.id {
            buffer.append(contentsOf: ",\"id\":".utf8)
            switch id {
            case .integer(let value): buffer.append(contentsOf: String(value).utf8)
            case .string(let text):
                var out = OutputBuffer(capacity: text.utf8.count + 16)
                out.jsonString(text)
                buffer.append(contentsOf: out.bytes)
            }
        }
        buffer.append(contentsOf: "}\n".utf8)
        flushIfFull()
    }

    /// A line over `limit` bytes.
    @usableFromInline
    mutating func recordTooLong(limit: Int) {
        buffer.append(contentsOf: repeatElement(UInt8(ascii: " "), count: limit + 1))
        buffer.append(0x0A)
        flushIfFull()
    }

    mutating func recordAsIs(_ line: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: line)
        buffer.append(0x0A)
        flushIfFull()
    }

    mutating func flushIfFull() {
        if buffer.count >= policy.flushThreshold { flush() }
    }

    /// Writes what waits to the sink.
    @usableFromInline
    mutating func flush() {
        guard failure == nil, !buffer.isEmpty else { return }
        var pending: [UInt8] = []
        swap(&pending, &buffer)
        let written: Result<Void, Sink.Failure> = pending.withUnsafeBytes { bytes in
            do throws(Sink.Failure) {
                try sink.write(bytes)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        if case .failure(let error) = written { failure = error }
        pending.removeAll(keepingCapacity: pending.capacity <= 1 << 20)
        swap(&pending, &buffer)
    }
}
