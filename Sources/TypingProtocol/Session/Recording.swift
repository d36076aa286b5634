import TypingCore

/// `--record`: the input of a real-clock session, line by line with the time each
/// line was applied at, and how the session ended, so that `typingd replay FILE`
/// (and `typingd check`) reproduces its output byte for byte.
///
/// The format, one record line per LF-terminated line:
///
/// ```
/// #typingd-record v1 --timeout-ms 3000 --style group …     the session's options
/// 1534<TAB>{"cmd":"type","conv":"team","user":"ana"}       input line 1, applied at 1534 ms
/// 1534<TAB>garbage                                         line 2, refused at 1534
/// 2210<TAB>                                                line 3, blank
/// 2210!                                                    line 4, longer than --max-line-bytes
/// #end 5210                                                the session ended at 5210
/// ```
///
/// - The header names every option that shapes the output (``SessionConfiguration``
///   as words `typingd` parses), so a replay needs none.
/// - Each input line is recorded as framed: its bytes unchanged (without its LF and
///   one trailing CR), never longer than it was, after the time the engine stood at
///   when it was applied, blank and refused lines too. A replay moves the clock to
///   that time (firing the timeouts due by then) and applies the same bytes the same
///   way, so timeouts and lines interleave as they did, errors included.
/// - A line longer than `--max-line-bytes` is recorded as its time and `!`: the
///   replay reports it as too long, without the bytes ever being kept.
/// - Times never go back (the engine's clock does not): a line's time is at least
///   the previous line's, the end's at least the last line's. A record whose times
///   go back is malformed.
/// - `#end T`: the session stopped at time T, at the end of input (after the drain,
///   if any) or on a signal. The replay moves the clock to T and stops there; it
///   does not drain. A record without an end (the process was killed) replays up to
///   its last line.
///
/// Nothing else is recorded: the replay fires timeouts at the same deadlines.
package enum RecordFormat {
    /// The first word of the header line.
    static let magic = "#typingd-record"
    /// The version word after it.
    static let version = "v1"
    /// The first word of the end line.
    static let end = "#end"
    /// The most bytes of a header line (it holds the session's phrase tables).
    package static let maxHeaderBytes = 1 << 24

    /// True when `bytes` start like a record.
    package static func isRecord(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.starts(with: (magic + " ").utf8)
    }
}

/// The writer of a record (see ``RecordFormat``).
@usableFromInline
struct Recording<Sink: ByteSink> {
    @usableFromInline var sink: Sink
    @usableFromInline var buffer: [UInt8] = []
    @usableFromInline let policy: OutputPolicy
    /// The first write error.
    @usableFromInline var failure: Sink.Failure?

    /// A record that writes to `sink`, starting with a header that names `options`.
    @usableFromInline
    init(sink: Sink, policy: OutputPolicy, options: [String]) {
        self.sink = sink
        self.policy = policy
        buffer.reserveCapacity(4096)
        buffer.append(contentsOf: ([RecordFormat.magic, RecordFormat.version] + options.map(ArgumentWords.quote))
            .joined(separator: " ").utf8)
        buffer.append(0x0A)
    }

    /// An input line, applied (or refused, or skipped as blank) at `time`.
    @usableFromInline
    mutating func record(_ line: UnsafeRawBufferPointer, at time: Int) {
        appendDecimal(time)
        buffer.append(0x09)
        buffer.append(contentsOf: line)
        buffer.append(0x0A)
        flushIfFull()
    }

    /// A line over the limit, reported at `time`.
    @usableFromInline
    mutating func recordTooLong(at time: Int) {
        appendDecimal(time)
        buffer.append(contentsOf: "!\n".utf8)
        flushIfFull()
    }

    /// The end of the session, at `time`.
    mutating func recordEnd(at time: Int) {
        buffer.append(contentsOf: "\(RecordFormat.end) \(time)\n".utf8)
    }

    @usableFromInline
    mutating func appendDecimal(_ value: Int) {
        buffer.append(contentsOf: String(value).utf8)
    }

    @usableFromInline
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

/// Plays a record back into a session (see ``RecordFormat``): the session is made
/// from the header's options with the real clock and no drain, and the record
/// drives its clock.
package struct RecordPlayer {
    /// Why a record cannot be played.
    package struct BadRecord: Error, CustomStringConvertible {
        package let description: String
    }

    /// Why playing stopped early.
    package enum Failure<SinkFailure: Error>: Error {
        /// The record is malformed.
        case badRecord(BadRecord)
        /// The session's sink failed.
        case sink(SinkFailure)
    }

    /// How a record ended.
    package enum Ending: Equatable {
        /// With its end line, at this time.
        case ended(at: Int)
        /// Without one: the recording process was killed.
        case unterminated
    }

    /// The options in `header`, the record's first line (without its LF).
    package static func options(header: UnsafeRawBufferPointer) throws(BadRecord) -> [String] {
        let text = String(decoding: header, as: UTF8.self)
        guard RecordFormat.isRecord(header) else {
            throw BadRecord(description: "the file does not start with \"\(RecordFormat.magic)\": it is not a record made by typingd --record")
        }
        let words: [String]
        do {
            words = try ArgumentWords.split(String(text.dropFirst(RecordFormat.magic.count + 1)))
        } catch {
            throw BadRecord(description: "the header line of the record is malformed: \(error)")
        }
        guard words.first == RecordFormat.version else {
            throw BadRecord(description: "the record is of version \(words.first ?? "(none)"); this typingd plays \(RecordFormat.version)")
        }
        return Array(words.dropFirst())
    }

    /// Record lines read so far (the header is line 1).
    private var recordLine = 1
    /// Input lines played so far.
    private var inputLine = 0
    /// The start of a record line whose LF has not arrived yet.
    private var pending: [UInt8] = []
    /// Set by the end line; nothing may follow it.
    package private(set) var ending: Ending = .unterminated
    /// The time of the last record line played: typingd's clock never goes back,
    /// so neither do the times of a record it wrote.
    private var lastTime = 0
    /// The longest record line accepted: the session's longest input line, its time
    /// and a tab.
    private let maxRecordLine: Int

    /// A player of the lines after the header, for a session made from its options.
    package init(maxLineBytes: Int) {
        maxRecordLine = maxLineBytes.addingReportingOverflow(32).overflow ? Int.max : maxLineBytes + 32
    }

    /// Plays the complete record lines of `chunk` (the bytes after the header line);
    /// a partial last line waits for more.
    package mutating func feed<Format: EventFormat & ~Copyable, Sink: ByteSink>(
        _ chunk: UnsafeRawBufferPointer, into session: inout Session<Format, Sink>
    ) throws(Failure<Sink.Failure>) {
        var start = 0
        while start < chunk.count {
            let rest = UnsafeRawBufferPointer(rebasing: chunk[start...])
            guard let lf = Bytes.firstIndex(of: 0x0A, in: rest) else {
                guard pending.count + rest.count <= maxRecordLine else {
                    throw .badRecord(BadRecord(description: "record line \(recordLine + 1) is longer than any line the recorded session accepted"))
                }
                pending.append(contentsOf: rest)
                return
            }
            if pending.isEmpty {
                try play(UnsafeRawBufferPointer(rebasing: rest[0..<lf]), into: &session)
            } else {
                pending.append(contentsOf: rest[0..<lf])
                let line = pending
                pending.removeAll(keepingCapacity: pending.capacity <= 1 << 16)
                let played: Result<Void, Failure<Sink.Failure>> = line.withUnsafeBytes { bytes in
                    do throws(Failure<Sink.Failure>) {
                        return .success(try play(bytes, into: &session))
                    } catch {
                        return .failure(error)
                    }
                }
                try played.get()
            }
            start += lf + 1
        }
    }

    /// Ends the record: a last line without LF is malformed (typingd ends every
    /// record line with one), so the record was cut short.
    package func finish() throws(BadRecord) {
        guard pending.isEmpty else {
            throw BadRecord(description: "record line \(recordLine + 1) has no line break: the record was cut short")
        }
    }

    /// Plays one record line.
    private mutating func play<Format: EventFormat & ~Copyable, Sink: ByteSink>(
        _ line: UnsafeRawBufferPointer, into session: inout Session<Format, Sink>
    ) throws(Failure<Sink.Failure>) {
        recordLine += 1
        guard ending == .unterminated else {
            throw .badRecord(BadRecord(description: "record line \(recordLine) follows the end line"))
        }
        if line.starts(with: (RecordFormat.end + " ").utf8) {
            let time: Int
            do throws(BadRecord) {
                time = try RecordPlayer.time(UnsafeRawBufferPointer(rebasing: line[(RecordFormat.end.count + 1)...]),
                                             line: recordLine)
                try checkOrder(time)
            } catch {
                throw .badRecord(error)
            }
            do throws(Sink.Failure) { try session.advance(to: time) } catch { throw .sink(error) }
            ending = .ended(at: time)
            return
        }
        var digits = 0
        while digits < line.count && (0x30...0x39).contains(line[digits]) { digits += 1 }
        guard digits > 0, digits < line.count, line[digits] == 0x09 || (line[digits] == 0x21 && digits + 1 == line.count) else {
            throw .badRecord(BadRecord(description: "record line \(recordLine) is neither \"TIME<TAB>LINE\", \"TIME!\" nor \"\(RecordFormat.end) TIME\""))
        }
        let time: Int
        do throws(BadRecord) {
            time = try RecordPlayer.time(UnsafeRawBufferPointer(rebasing: line[0..<digits]), line: recordLine)
            try checkOrder(time)
        } catch {
            throw .badRecord(error)
        }
        inputLine += 1
        do throws(Sink.Failure) {
            try session.advance(to: time)
            if line[digits] == 0x21 {
                try session.processTooLong(number: inputLine)
            } else {
                try session.process(UnsafeRawBufferPointer(rebasing: line[(digits + 1)...]), number: inputLine)
            }
        } catch {
            throw .sink(error)
        }
    }

    /// Refuses `time` (of the record line just read) when it is before the previous
    /// line's: typingd never writes such a record, and playing it would apply the
    /// line at a time other than the one it names.
    private mutating func checkOrder(_ time: Int) throws(BadRecord) {
        guard time >= lastTime else {
            throw BadRecord(description: "record line \(recordLine) goes back in time: \(time) ms after \(lastTime) ms on the line before")
        }
        lastTime = time
    }

    /// The time in `digits`, within the range of `at`.
    private static func time(_ digits: UnsafeRawBufferPointer, line: Int) throws(BadRecord) -> Int {
        var value = 0
        for byte in digits {
            guard (0x30...0x39).contains(byte), value <= (Engine.maxTime - Int(byte - 0x30)) / 10 else {
                throw BadRecord(description: "record line \(line) has no time from 0 to \(Engine.maxTime)")
            }
            value = value * 10 + Int(byte - 0x30)
        }
        guard !digits.isEmpty else {
            throw BadRecord(description: "record line \(line) has no time from 0 to \(Engine.maxTime)")
        }
        return value
    }
}
