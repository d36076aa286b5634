import TypingdOptions
import ArgumentParser
import Glibc
import TypingProtocol

/// `typingd replay RECORD`: writes the output of a recorded session again.
struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a recorded session's output again.",
        discussion: """
            Plays a record made by `typingd --record FILE`: with the options named in its \
            first line, each input line at the time it was applied (the timeouts due by \
            then fire first, as they did), up to the time the session ended (at the end \
            of input, after the drain, or on a signal). The output on stdout is the \
            session's, byte for byte; of a session that was killed (as by SIGKILL), whose \
            record has no end line, only up to its last recorded line, with a note on stderr.

            `typingd check` plays records too: a NAME.in.jsonl that is a record is a \
            transcript, with its expected output in NAME.out.jsonl.

            A record whose lines all end in CR LF (a checkout with git's autocrlf, a \
            Windows editor) plays as the record it was made from, each line without that \
            CR. Line ends mixed, or a CR elsewhere outside an input line's bytes (in the \
            header, a table line, an end line), make the record malformed.

            Exit status: 0 when the record was played (or a signal stopped it, or the \
            reader of stdout went away); 65 for a file that is not a well-formed record \
            (what is wrong, and on which record line, on stderr; the output before that \
            line is written); 64 for a session option such as --format (the record's header \
            gives them); 66 when the file cannot be read; 74 for another I/O error.
            """
    )

    @Argument(help: ArgumentHelp("The record (from `typingd --record FILE`), or - for stdin.", valueName: "record"))
    var record: String

    func run() throws {
        do throws(ReplayFailure) {
            try play()
        } catch {
            StandardOutput.diagnose("typingd replay: \(error.message)")
            throw ExitCode(error.status)
        }
    }

    /// Why a replay stopped with an error.
    struct ReplayFailure: Error {
        let message: String
        let status: Int32
    }

    func play() throws(ReplayFailure) {
        let signals: SignalWatcher
        do throws(IOFailure) {
            try StandardDescriptors.check()
            signals = try SignalWatcher()
        } catch {
            throw ReplayFailure(message: error.message ?? "cannot start", status: 74)
        }
        let fd: Int32
        if record == "-" {
            fd = 0
        } else {
            do {
                fd = try FileBytes.openRegular(record)
            } catch {
                throw ReplayFailure(message: error.description, status: 66)
            }
        }
        defer { if fd != 0 { close(fd) } }
        let input = InputReader(fd: fd)
        var preamble = RecordPreamble()
        var rest: [UInt8] = []
        let options: SessionOptions
        do {
            while true {
                let chunk = try input.read()
                if let start = try preamble.feed(chunk) {
                    rest = preamble.carried + chunk[start...]
                    break
                }
            }
            options = try RecordOptions.parse(preamble)
        } catch let failure as IOFailure {
            throw ReplayFailure(message: failure.message ?? "cannot read \(TextFormat.path(record))", status: 74)
        } catch {
            throw ReplayFailure(message: "\(TextFormat.path(record)): \(error)", status: 65)
        }
        let output = StandardOutput(fd: 1, signals: signals)
        defer { output.restore() }
        do {
            switch options.format {
            case .json:
                try play(
                    JSONFormat(), options: options, preamble: preamble, input: input, after: rest, to: output,
                    signals: signals)
            case .text:
                try play(
                    TextFormat(), options: options, preamble: preamble, input: input, after: rest, to: output,
                    signals: signals)
            }
        } catch let failure as ReplayFailure {
            throw failure
        } catch let failure as IOFailure {
            if let message = failure.message { throw ReplayFailure(message: message, status: 74) }
        } catch {
            throw ReplayFailure(message: "\(error)", status: 74)
        }
    }

    /// Plays the record lines after the `preamble` (the header and the table lines):
    /// `rest` (read with it), then what `input` reads, until its end, the record's end
    /// line or a signal.
    func play<Format: EventFormat & ~Copyable>(
        _ format: consuming Format, options: SessionOptions,
        preamble: RecordPreamble,
        input: borrowing InputReader, after rest: [UInt8],
        to output: StandardOutput, signals: SignalWatcher
    ) throws {
        let configuration: SessionConfiguration
        do {
            configuration = try options.configuration(recorded: preamble.tables)
        } catch {
            throw ReplayFailure(
                message: "\(TextFormat.path(record)): the record's header names a bad phrase table: \(error)",
                status: 65)
        }
        var session = Session(configuration: configuration, format: format, sink: output, record: nil)
        var player = RecordPlayer(maxLineBytes: options.maxLineBytes, after: preamble)
        func feed(_ bytes: UnsafeRawBufferPointer) throws {
            do throws(RecordPlayer.Failure<IOFailure>) {
                try player.feed(bytes, into: &session)
            } catch {
                switch error {
                case .sink(let failure): throw failure
                case .badRecord(let bad):
                    try session.flush()
                    throw ReplayFailure(message: "\(TextFormat.path(record)): \(bad)", status: 65)
                }
            }
        }
        try rest.withUnsafeBytes { try feed($0) }
        while signals.signal == nil && !session.wantsPause {
            let chunk = try input.read()
            if chunk.isEmpty {
                do {
                    try player.finish()
                } catch {
                    try session.flush()
                    throw ReplayFailure(message: "\(TextFormat.path(record)): \(error)", status: 65)
                }
                if player.ending == .unterminated {
                    StandardOutput.diagnose(
                        "typingd replay: \(TextFormat.path(record)) has no end line (the recording typingd was killed): played up to its last line"
                    )
                }
                break
            }
            try feed(chunk)
            try session.flush()
        }
        try session.flush()
    }
}
