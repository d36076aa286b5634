import CJansson
import TypingCore
import TypingProtocol

/// The properties the fuzzer (`fuzz/`) checks on arbitrary bytes, and that
/// `swift test` checks on its named regressions (`fuzz/regressions/`): one owner, so
/// that a case the fuzzer found fails the same way in the tests.
///
/// The input's first byte picks the options (timeout 1…8 ms, style, typing events,
/// small limits, a small --max-line-bytes) so timers, every phrase and every limit
/// are reached; the second picks who sees what (audience, order, a small
/// --max-listed); the third where the input is cut into reads. The rest is input.
/// An input shorter than three bytes is input alone, with the options of three zero
/// bytes: every input is run.
/// It traps (`preconditionFailure`) on the first property that fails, as a fuzzer
/// needs; the tests run each case in a child process, so that a trap fails that case:
///
/// - the engine's invariants hold after every line (in builds with the checker);
/// - the output is the same whether the input comes whole or cut in two, and
///   whether it goes through the parsing threads in small batches;
/// - no streak is left after the drain;
/// - every JSON output line is one object, starting with `"event"`, without a raw
///   control byte, and no input line gets two replies;
/// - `--format text` writes one line per event, with no control character but the
///   LF that ends it (no C0, DEL, C1, U+2028/U+2029, bidirectional controls).
public enum LineHandlerFuzz {
    /// Checks every property on `data`; returns the JSON output of the input run
    /// whole (what the properties were checked on).
    @discardableResult
    public static func check(_ data: UnsafeRawBufferPointer) -> [UInt8] {
        CommandDecoder.installArena() // as typingd decodes
        let hasOptions = data.count >= 3
        let settings = hasOptions ? data[0] : 0, views = hasOptions ? data[1] : 0, cut = hasOptions ? Int(data[2]) : 0
        let input = hasOptions ? UnsafeRawBufferPointer(rebasing: data[3...]) : data
        let configuration = self.configuration(settings: settings, views: views)

        let whole = run(input, configuration: configuration, format: JSONFormat(), cuts: [])
        let split = run(input, configuration: configuration, format: JSONFormat(), cuts: [cut * input.count / 256])
        precondition(whole.output == split.output, "output depends on how input is cut into reads")
        let threaded = runThreaded(input, configuration: configuration, lines: 1 + cut % 7, chunk: 1 + cut % 61)
        precondition(threaded == whole.output, "output of the threaded path differs")
        precondition(whole.typing == 0, "streaks left after the drain")
        checkJSON(whole.output)
        let text = run(input, configuration: configuration, format: TextFormat(), cuts: [])
        checkText(text.output, events: whole.output.lazy.filter { $0 == 0x0A }.count)
        return whole.output
    }

    /// The options the first two bytes pick.
    static func configuration(settings: UInt8, views: UInt8) -> SessionConfiguration {
        let orders: [EngineConfiguration.Order] = [.start, .recent, .name, .start]
        var configuration = SessionConfiguration(
            engine: EngineConfiguration(
                timeout: Int(settings & 7) + 1,
                style: settings & 8 == 0 ? .group : .compact,
                typingEvents: settings & 16 != 0,
                maxMembers: settings & 32 == 0 ? 100_000 : 3,
                maxMemberships: settings & 64 == 0 ? 10_000_000 : 5,
                audience: views & 1 == 0 ? .members : .open,
                order: orders[Int(views >> 1) & 3],
                maxListed: views & 8 == 0 ? 100 : Int(views >> 4) + 1,
                listStyle: views & 16 == 0 ? .compact : .group,
                phrases: views & 32 == 0 ? .english : (views & 64 == 0 ? fuzzBook : fuzzBookDefaultXX)),
            clock: .manual,
            maxLineBytes: settings & 128 == 0 ? 1 << 20 : 64,
            drain: true,
            output: OutputPolicy(flushThreshold: 512))
        configuration.checksInvariants = true
        return configuration
    }

    /// Phrase tables for the fuzzer: one with plural forms in subjects and verbs,
    /// one whose clause puts the verb first, empty text included; the default
    /// locale `de-CH` (`de`) or `xx` (the second).
    static let fuzzBook = book(defaultLocale: "de-CH")
    static let fuzzBookDefaultXX = book(defaultLocale: "xx")

    static func book(defaultLocale: String) -> PhraseBook {
        let tables = [
            #"{"locale":"de","plural":{"one":"i = 1 and v = 0"},"names":{"0+1":"Jemand","0+n":"{r} Personen","1":"{0}","1+1":"{0} und noch jemand","1+n":{"one":"{0} und {r} weiterer","other":"{0} und {r} weitere"},"2":"{0} und {1}","2+1":"{0}, {1} und noch jemand","2+n":"{0}, {1} und {r} weitere","3":"{0}, {1} und {2}"},"verbs":{"typing":{"one":"tippt","other":"tippen"},"recording_audio":"nimmt auf","recording_video":"filmt","sending_photo":"sendet ein Foto","sending_video":"sendet ein Video","sending_file":"sendet eine Datei","sharing_location":"teilt den Standort"},"clause":"{names} {verb}","separator":"; ","end":" …"}"#,
            #"{"locale":"xx","plural":{"zero":"n = 0","few":"n % 10 = 2..4 and n % 100 != 12..14","many":"n != 0 and n != 1"},"names":{"0+1":"","0+n":{"few":"{r}\u200ff","other":"{r}"},"1":"\"{0}\"","1+1":"{0}+1","1+n":"{0}+{r}","2":"{0}{1}","2+1":"{1}{0}+1","2+n":"{0}|{1}|{r}","3":"{2}{1}{0}"},"verbs":{"typing":"\u00adT","recording_audio":"RA","recording_video":"RV","sending_photo":"SP","sending_video":"SV","sending_file":"SF","sharing_location":"\u202eSL"},"clause":"{verb}{names}{verb}","separator":"","end":""}"#
        ]
        var loaded: [PhraseTable] = []
        for text in tables {
            let bytes = Array(text.utf8)
            let result: Result<PhraseTable, PhraseTable.Error> = bytes.withUnsafeBytes { raw in
                Result { () throws(PhraseTable.Error) in try PhraseTableFile.decode(raw) }
            }
            guard case .success(let table) = result else { preconditionFailure("a fuzz table is invalid: \(result)") }
            loaded.append(table)
        }
        do {
            return try PhraseBook(tables: loaded, defaultLocale: defaultLocale)
        } catch {
            preconditionFailure("the fuzz book is invalid: \(error)")
        }
    }

    /// Runs `input` through a session, fed in parts cut at `cuts`.
    static func run<Format: EventFormat & ~Copyable>(
        _ input: UnsafeRawBufferPointer, configuration: SessionConfiguration,
        format: consuming Format, cuts: [Int]
    ) -> (output: [UInt8], typing: Int) {
        var session = Session(configuration: configuration, format: format, sink: [UInt8]())
        var start = 0
        for end in cuts + [input.count] where end >= start {
            let consumed = session.feed(UnsafeRawBufferPointer(rebasing: input[start..<end]))
            precondition(consumed == end - start, "a sink that never pauses got a partial feed")
            session.flush()
            start = end
        }
        session.finish()
        session.flush()
        session.engine.checkInvariants()
        return (session.sink, session.engine.typingCount)
    }

    /// Runs `input` as the daemon does under a flood: read `chunk` bytes at a time,
    /// every read a flood, framed into batches of `lines` lines, parsed by two
    /// worker threads (and this one), applied in order.
    static func runThreaded(
        _ input: UnsafeRawBufferPointer, configuration: SessionConfiguration,
        lines: Int, chunk: Int
    ) -> [UInt8] {
        let session = Session(configuration: configuration, sink: [UInt8]())
        var pipeline: InputPipeline<JSONFormat, [UInt8]>
        do throws(ThreadSpawner.Failure) {
            pipeline = try InputPipeline(session: session, threads: 3, batchLines: lines, batchBytes: 4096)
        } catch {
            preconditionFailure("could not start the parsing threads: errno \(error.errno)")
        }
        var offset = 0
        while offset < input.count {
            let end = min(input.count, offset + chunk)
            precondition(
                pipeline.feed(UnsafeRawBufferPointer(rebasing: input[offset..<end]), stamp: nil, flooded: true),
                "a sink that never pauses paused")
            offset = end
        }
        precondition(pipeline.finish(), "a sink that never pauses paused")
        pipeline.session.flush()
        return pipeline.session.sink
    }

    /// Every output line is one JSON object starting with "event", with no raw
    /// control byte; no input line gets two errors, or an error and an ok.
    static func checkJSON(_ output: [UInt8]) {
        var errorLines = Set<Int>(), okLines = Set<Int>()
        output.withUnsafeBytes { bytes in
            var start = 0
            while start < bytes.count {
                guard let lf = bytes[start...].firstIndex(of: 0x0A) else {
                    preconditionFailure("output does not end with LF")
                }
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<lf])
                precondition(!line.contains { $0 < 0x20 }, "raw control byte in an event")
                precondition(line.starts(with: #"{"event":""#.utf8), "event key not first")
                var error = json_error_t()
                guard
                    let root = json_loadb(
                        line.baseAddress?.assumingMemoryBound(to: CChar.self), line.count,
                        cj_decode_flags(), &error)
                else {
                    preconditionFailure("output line is not valid JSON")
                }
                precondition(cj_is_object(root) != 0, "output line is not an object")
                if let event = json_object_get(root, "event"), let kind = json_string_value(event) {
                    let name = String(cString: kind)
                    let number = Int(json_integer_value(json_object_get(root, "line")))
                    if name == "error" {
                        precondition(errorLines.insert(number).inserted, "two errors for line \(number)")
                        precondition(!okLines.contains(number), "ok and error for line \(number)")
                    } else if name == "ok" {
                        precondition(okLines.insert(number).inserted, "two oks for line \(number)")
                    }
                    if name == "indicator", let text = json_string_value(json_object_get(root, "text")) {
                        precondition(
                            !String(cString: text).unicodeScalars.contains {
                                $0.value < 0x20 || (0x7F...0x9F).contains($0.value)
                            },
                            "control character in an indicator text")
                    }
                }
                json_decref(root)
                start = lf + 1
            }
        }
    }

    /// The text format wrote `events` lines, each ending in its LF and holding no
    /// other control character (``TextFormat/isUnsafe(_:)``).
    static func checkText(_ output: [UInt8], events: Int) {
        let text = String(decoding: output, as: UTF8.self)
        var lines = 0
        for scalar in text.unicodeScalars {
            if scalar == "\n" {
                lines += 1
            } else {
                precondition(
                    !TextFormat.isUnsafe(scalar), "--format text wrote U+\(String(scalar.value, radix: 16)) raw")
            }
        }
        precondition(
            lines == events && (output.isEmpty || output.last == 0x0A),
            "--format text wrote \(lines) lines for \(events) events")
    }
}
