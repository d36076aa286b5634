import TypingCore

/// `--record`: the input of a real-clock session, line by line with the time each
/// line was applied at, and how the session ended, so that `typingd replay FILE`
/// (and `typingd check`) reproduces its output byte for byte. A record is one
/// self-contained file: it holds the session's phrase tables too.
///
/// The format (version 2), one record line per LF-terminated line:
///
/// ```
/// #typingd-record v2 --timeout-ms 3000 --style group …     the session's options
/// #table {"locale":"de", …}                                 a phrase table it loaded
/// #table {"locale":"fr", …}                                 another
/// 1534<TAB>{"cmd":"type","conv":"team","user":"ana"}       input line 1, applied at 1534 ms
/// 1534<TAB>garbage                                         line 2, refused at 1534
/// 2210<TAB>                                                line 3, blank
/// 2210!                                                    line 4, longer than --max-line-bytes
/// #end 5210                                                the session ended at 5210
/// ```
///
/// - The header names every option that shapes the output (``SessionConfiguration``
///   as words `typingd` parses), so a replay needs none, and never a file: no
///   `--phrases` (nor, since v2, `--phrase-table`). It is short; a reader takes at
///   most ``maxHeaderBytes`` (what a v1 header, which held the tables, may take).
/// - `#table JSON`: one line per phrase table the session loaded, in the order it
///   loaded them (built-in English aside), right after the header: the table's text
///   as it was read, with its line breaks (JSON white space, never inside a string)
///   turned into spaces. So a table line is at most ``maxTableLineBytes``, whatever
///   the table holds and however many there are, and a replay loads the same tables
///   in the same order. A reader holds one table line at a time.
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
///
/// Line ends (``RecordFormat/LineEnd``): typingd ends every record line with LF and
/// writes a CR only inside an input line's bytes (a CR in the middle of an input
/// line, or the second of two before its LF). A record whose first line ends in
/// CR LF (a checkout with git's autocrlf, a Windows editor) is read as the record it
/// was made from: every line must end in CR LF, and exactly that CR is dropped. Any
/// other CR outside an input line's bytes (line ends mixed, a CR in the header, a
/// table line or an end line) makes the record malformed, at that line, so that a
/// record is never played otherwise than as typingd wrote it.
///
/// Version 1 (typingd 3.0.0) had no table lines: its header held the tables as
/// `--phrase-table JSON` words, written back from the loaded tables, so many or
/// large tables made a header, or a table, longer than a reader takes. v1 records
/// still play.
package enum RecordFormat {
    /// The first word of the header line.
    static let magic = "#typingd-record"
    /// The version word after it, as typingd writes it.
    static let version = "v2"
    /// The first version, whose header holds the tables (it has no table lines).
    package static let firstVersion = "v1"
    /// The versions typingd plays.
    static let versions = [firstVersion, version]
    /// The first word of a table line.
    package static let table = "#table"
    /// The first word of the end line.
    static let end = "#end"
    /// The most bytes of a header line a reader takes: a v1 header holds the
    /// session's phrase tables (a v2 header, only options, is far shorter).
    package static let maxHeaderBytes = 1 << 24
    /// The most bytes of a table line (without its LF): the word, a space and a
    /// table's text, which ``PhraseTableFile/maxBytes`` bounds for every table
    /// typingd loads.
    package static let maxTableLineBytes = table.utf8.count + 1 + PhraseTableFile.maxBytes

    /// How a record's lines end. typingd writes LF; a record whose first line ends
    /// in CR LF had a CR put before every LF since (the header typingd writes never
    /// holds a CR, so the first line tells them apart), and is read without those CRs.
    package enum LineEnd: Sendable {
        /// As typingd writes a record.
        case lf
        /// Every line with a CR before its LF.
        case crlf
    }

    /// Why a record line that holds a CR where typingd writes none (outside an
    /// input line's bytes, besides the CR of a CR LF line end) is malformed.
    static func strayCR(line: Int, lineEnd: LineEnd) -> String {
        "record line \(line) holds a CR where typingd writes none (only an input line may hold one)"
            + (lineEnd == .lf && line > 1 ? ": the first line ends in LF alone, so every line must" : "")
    }

    /// Why a line ending in LF alone in a record whose first line ends in CR LF is malformed.
    static func lfAlone(line: Int) -> String {
        "record line \(line) ends in LF alone, but the first line ends in CR LF: a record's lines must all end in CR LF, or all in LF"
    }

    /// True when `bytes` start like a record.
    package static func isRecord(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.starts(with: (magic + " ").utf8)
    }
}

/// What a record starts with: the options for its header, and the text of every
/// phrase table the session loaded (as read: each at most ``PhraseTableFile/maxBytes``).
package struct RecordHeader {
    /// The options, as words `typingd` parses.
    package var options: [String]
    /// The tables' JSON texts, in the order they were loaded.
    package var tables: [[UInt8]]

    package init(options: [String], tables: [[UInt8]] = []) {
        self.options = options
        self.tables = tables
    }
}

/// The writer of a record (see ``RecordFormat``).
@usableFromInline
package struct Recording<Sink: ByteSink> {
    @usableFromInline package var sink: Sink
    @usableFromInline var buffer: [UInt8] = []
    @usableFromInline let policy: OutputPolicy
    /// The first write error.
    @usableFromInline var failure: Sink.Failure?

    /// A record that writes to `sink`, starting with `header`: its options, then a
    /// line per table.
    init(sink: Sink, policy: OutputPolicy, header: RecordHeader) {
        self.sink = sink
        self.policy = policy
        buffer.reserveCapacity(4096)
        buffer.append(
            contentsOf: ([RecordFormat.magic, RecordFormat.version] + header.options.map(ArgumentWords.quote))
                .joined(separator: " ").utf8)
        buffer.append(0x0A)
        for table in header.tables {
            buffer.append(contentsOf: (RecordFormat.table + " ").utf8)
            // In JSON text, CR and LF are only ever white space between tokens.
            for byte in table { buffer.append(byte == 0x0A || byte == 0x0D ? 0x20 : byte) }
            buffer.append(0x0A)
            flushIfFull()
        }
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

    /// The version and the options in `header`, the record's first line (without its
    /// line end, LF or CR LF).
    static func header(_ header: UnsafeRawBufferPointer, lineEnd: RecordFormat.LineEnd) throws(BadRecord) -> (
        version: String, options: [String]
    ) {
        let text = String(decoding: header, as: UTF8.self)
        guard RecordFormat.isRecord(header) else {
            throw BadRecord(
                description:
                    "the file does not start with \"\(RecordFormat.magic)\": it is not a record made by typingd --record"
            )
        }
        guard Bytes.firstIndex(of: 0x0D, in: header) == nil else {
            throw BadRecord(description: RecordFormat.strayCR(line: 1, lineEnd: lineEnd))
        }
        let words: [String]
        do {
            words = try ArgumentWords.split(String(text.dropFirst(RecordFormat.magic.count + 1)))
        } catch {
            throw BadRecord(description: "the header line of the record is malformed: \(error)")
        }
        guard let version = words.first, RecordFormat.versions.contains(version) else {
            throw BadRecord(
                description:
                    "the record is of version \(words.first ?? "(none)"); this typingd plays \(RecordFormat.versions.joined(separator: " and "))"
            )
        }
        return (version, Array(words.dropFirst()))
    }

    /// Record lines read so far (the header and the table lines first).
    private var recordLine: Int
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
    /// and a tab (and a CR, when the lines end in CR LF).
    private let maxRecordLine: Int
    /// How the record's lines end, as its first line does.
    private let lineEnd: RecordFormat.LineEnd

    /// A player of the lines after `preamble` (the header and the table lines), for
    /// a session made from its options.
    package init(maxLineBytes: Int, after preamble: RecordPreamble) {
        recordLine = preamble.lines
        lineEnd = preamble.lineEnd
        let slack = lineEnd == .crlf ? 33 : 32
        maxRecordLine = maxLineBytes.addingReportingOverflow(slack).overflow ? Int.max : maxLineBytes + slack
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
                    throw .badRecord(
                        BadRecord(
                            description:
                                "record line \(recordLine + 1) is longer than any line the recorded session accepted"))
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

    /// Plays one record line (without its LF).
    private mutating func play<Format: EventFormat & ~Copyable, Sink: ByteSink>(
        _ terminated: UnsafeRawBufferPointer, into session: inout Session<Format, Sink>
    ) throws(Failure<Sink.Failure>) {
        recordLine += 1
        guard ending == .unterminated else {
            throw .badRecord(BadRecord(description: "record line \(recordLine) follows the end line"))
        }
        var line = terminated
        if lineEnd == .crlf {
            guard line.last == 0x0D else {
                throw .badRecord(BadRecord(description: RecordFormat.lfAlone(line: recordLine)))
            }
            line = UnsafeRawBufferPointer(rebasing: line[..<(line.count - 1)])
        }
        var digits = 0
        while digits < line.count && (0x30...0x39).contains(line[digits]) { digits += 1 }
        // An input line's bytes are the session's, CRs included; typingd writes no
        // CR anywhere else.
        let isInput = digits > 0 && digits < line.count && line[digits] == 0x09
        guard isInput || Bytes.firstIndex(of: 0x0D, in: line) == nil else {
            throw .badRecord(BadRecord(description: RecordFormat.strayCR(line: recordLine, lineEnd: lineEnd)))
        }
        if line.starts(with: (RecordFormat.end + " ").utf8) {
            let time: Int
            do throws(BadRecord) {
                time = try RecordPlayer.time(
                    UnsafeRawBufferPointer(rebasing: line[(RecordFormat.end.count + 1)...]),
                    line: recordLine)
                try checkOrder(time)
            } catch {
                throw .badRecord(error)
            }
            do throws(Sink.Failure) { try session.advance(to: time) } catch { throw .sink(error) }
            ending = .ended(at: time)
            return
        }
        guard digits > 0, digits < line.count,
            line[digits] == 0x09 || (line[digits] == 0x21 && digits + 1 == line.count)
        else {
            throw .badRecord(
                BadRecord(
                    description:
                        "record line \(recordLine) is neither \"TIME<TAB>LINE\", \"TIME!\" nor \"\(RecordFormat.end) TIME\""
                ))
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
            throw BadRecord(
                description:
                    "record line \(recordLine) goes back in time: \(time) ms after \(lastTime) ms on the line before")
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

/// Reads what comes before a record's input lines (see ``RecordFormat``): the header
/// line, and after a v2 header the table lines, each decoded as soon as it is
/// complete, so that a reader holds one line at a time, each bounded
/// (``RecordFormat/maxHeaderBytes``, ``RecordFormat/maxTableLineBytes``).
package struct RecordPreamble {
    /// The record's version.
    package private(set) var version = ""
    /// The options its header names.
    package private(set) var options: [String] = []
    /// The tables of its table lines, in order.
    package private(set) var tables: [PhraseTable] = []
    /// The record lines read: the header and the table lines.
    package private(set) var lines = 0
    /// How the record's lines end, as its header's line does.
    package private(set) var lineEnd: RecordFormat.LineEnd = .lf
    /// The start of the first line after the preamble, read with an earlier chunk
    /// (at most a few bytes): it comes before what ``feed(_:)`` returns.
    package private(set) var carried: [UInt8] = []
    /// The line being read.
    private var pending: [UInt8] = []

    package init() {}

    /// Reads the next chunk of the record (empty at its end). Returns nil while the
    /// preamble goes on, else the offset in `chunk` where the lines after it start
    /// (after ``carried``).
    package mutating func feed(_ chunk: UnsafeRawBufferPointer) throws(RecordPlayer.BadRecord) -> Int? {
        if chunk.isEmpty { return try end() }
        var start = 0
        while start < chunk.count {
            let rest = UnsafeRawBufferPointer(rebasing: chunk[start...])
            let lf = Bytes.firstIndex(of: 0x0A, in: rest)
            let segment = UnsafeRawBufferPointer(rebasing: rest[..<(lf ?? rest.count)])
            if lines > 0 {
                switch startsTable(segment, complete: lf != nil) {
                case .no:
                    swap(&carried, &pending)
                    return start
                case .undecided:
                    pending.append(contentsOf: segment)
                    return nil
                case .yes:
                    break
                }
            }
            // The line being read is line `lines + 1`. The header's line end is not
            // known before its LF: it may have a CR.
            let limit = RecordPreamble.limit(line: lines + 1)
            let crlf = lines == 0 || lineEnd == .crlf ? 1 : 0
            guard segment.count <= limit + crlf - pending.count else { throw RecordPreamble.tooLong(line: lines + 1) }
            pending.append(contentsOf: segment)
            guard let lf else { return nil }
            lines += 1
            if lines == 1 && pending.last == 0x0D { lineEnd = .crlf }
            if lineEnd == .crlf {
                guard pending.last == 0x0D else {
                    throw RecordPlayer.BadRecord(description: RecordFormat.lfAlone(line: lines))
                }
                pending.removeLast()
            }
            guard pending.count <= limit else { throw RecordPreamble.tooLong(line: lines) }
            if lines == 1 {
                let header = pending.withUnsafeBytes { [lineEnd] bytes in
                    Result { () throws(RecordPlayer.BadRecord) in try RecordPlayer.header(bytes, lineEnd: lineEnd) }
                }
                (version, options) = try header.get()
            } else {
                guard !pending.contains(0x0D) else {
                    throw RecordPlayer.BadRecord(description: RecordFormat.strayCR(line: lines, lineEnd: lineEnd))
                }
                try readTable()
            }
            pending = []
            start += lf + 1
            if version == RecordFormat.firstVersion { return start } // no table lines
        }
        return nil
    }

    /// The most bytes of record line `line` of the preamble (without its line end).
    private static func limit(line: Int) -> Int {
        line == 1 ? RecordFormat.maxHeaderBytes : RecordFormat.maxTableLineBytes
    }

    /// Why record line `line` of the preamble is refused as too long.
    private static func tooLong(line: Int) -> RecordPlayer.BadRecord {
        RecordPlayer.BadRecord(
            description: line == 1
                ? "the first line is longer than \(limit(line: line)) bytes: it is not a record made by typingd --record"
                : "record line \(line) is longer than a phrase table may be (\(PhraseTableFile.maxBytes) bytes)")
    }

    /// Whether the line in `pending` and `segment` (its rest, or the part read so
    /// far unless `complete`) is a table line.
    private func startsTable(_ segment: UnsafeRawBufferPointer, complete: Bool) -> Tri {
        let tag = RecordPreamble.tag
        let known = pending.count + segment.count
        for index in 0..<min(tag.count, known) {
            let byte = index < pending.count ? pending[index] : segment[index - pending.count]
            if byte != tag[index] { return .no }
        }
        if known >= tag.count { return .yes }
        return complete ? .no : .undecided
    }

    private enum Tri { case yes, no, undecided }

    /// The start of a table line.
    private static let tag = Array((RecordFormat.table + " ").utf8)

    /// Decodes the table line in `pending`.
    private mutating func readTable() throws(RecordPlayer.BadRecord) {
        let count = RecordPreamble.tag.count
        let result: Result<PhraseTable, PhraseTable.Error> = pending.withUnsafeBytes { bytes in
            Result { () throws(PhraseTable.Error) in
                try PhraseTableFile.decode(UnsafeRawBufferPointer(rebasing: bytes[count...]))
            }
        }
        switch result {
        case .success(let table): tables.append(table)
        case .failure(let error):
            throw RecordPlayer.BadRecord(description: "record line \(lines) holds a bad phrase table: \(error)")
        }
    }

    /// The end of the record, before the preamble ended.
    private mutating func end() throws(RecordPlayer.BadRecord) -> Int {
        if lines == 0 {
            throw RecordPlayer.BadRecord(
                description: pending.isEmpty
                    ? "the file is empty, not a record"
                    : "the first line has no line break: it is not a record made by typingd --record")
        }
        guard pending.isEmpty else {
            throw RecordPlayer.BadRecord(
                description: "record line \(lines + 1) has no line break: the record was cut short")
        }
        return 0
    }
}
