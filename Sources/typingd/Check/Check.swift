import TypingdOptions
import ArgumentParser
import Glibc
import TypingCore
import TypingProtocol

/// `typingd check [PATH …]`: runs golden transcripts and compares their output.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run golden transcripts and compare their output, byte for byte.",
        discussion: """
            Finds every NAME.in.jsonl under the given files or folders (folders are \
            searched recursively, each once however many symlinks lead to it), runs it in \
            this process as `typingd --clock manual` would, with the options in NAME.args \
            when there is one, and compares the output with NAME.out.jsonl byte for byte. \
            For each failure it prints which lines differ (a shortest set of changed, \
            missing and extra lines) and, for an event line, which keys; past 20 \
            differences it counts the rest and prints a command whose diff shows every \
            one (past 1,000 lines removed and added, lines are compared by position, and \
            the report says so). It ends with the line "N passed, N failed".

            NAME.args holds options separated by white space; quote a value that holds \
            white space with "…" or '…', and start a comment with #. A transcript whose \
            options name --clock real runs with the clock standing at 0. A NAME.in.jsonl \
            that is a record made by `typingd --record` is played as `typingd replay` \
            plays it, with the options in its header (it has no NAME.args).

            Inputs and expected files must be regular files of at most \(FileBytes.maxBytes >> 20) MiB.

            --bless writes the expected files from the actual output instead (creating \
            missing ones; each is written beside the old one and renamed over it, so a \
            failed write leaves the old file as it was) and says what changed: review the \
            diff before committing it.

            Exit status: 0 when every transcript passed (or was blessed); 1 when one \
            failed or could not run (a bad NAME.args, a malformed record); 64 when there \
            is nothing to check (a path that does not exist, is neither a folder nor a \
            NAME.in.jsonl, or is a folder that cannot be read or holds no transcript, or \
            a transcript or folder under it is named in bytes that are not UTF-8), for \
            a bad option or a session option such as --format (NAME.args gives them), and when the --junit file cannot be written; 74 when typingd \
            cannot watch for signals; 128 + N when stopped by signal N (SIGINT, SIGTERM, \
            ...), after the transcript it was running.
            """
    )

    @Argument(help: ArgumentHelp("Transcripts (NAME.in.jsonl) or folders of them.", valueName: "path"))
    var paths: [String] = ["."]

    @Flag(help: "Write the actual output to the expected files (NAME.out.jsonl), creating missing ones.")
    var bless = false

    @Option(
        help: ArgumentHelp(
            "Also write a JUnit XML report of the run to this file, for CI systems.",
            valueName: "file"))
    var junit: String?

    @Flag(
        help: ArgumentHelp(
            "Also check the engine's internal invariants after every line (slow; only in builds with the checker).",
            visibility: .hidden))
    var invariants = false

    func validate() throws {
        if invariants && !Engine.hasInvariantChecker {
            // A pass would say nothing about the invariants: refuse rather than pass.
            throw ValidationError(
                "--invariants: this build has no invariant checker; a debug build has it (swift build, then .build/debug/typingd check --invariants)"
            )
        }
    }

    func run() throws {
        let signals: SignalWatcher
        do throws(IOFailure) {
            signals = try SignalWatcher()
        } catch {
            StandardOutput.diagnose("typingd check: \(error.message ?? "cannot watch signals")")
            throw ExitCode(74)
        }
        let summary: TranscriptCheck.Summary
        do {
            var check = TranscriptCheck(bless: bless, checksInvariants: invariants)
            check.stop = { signals.signal != nil }
            summary = try check.run(paths) { line in print(TextFormat.terminalSafe(line)) }
            if let junit { try JUnitReport.write(summary, to: junit) }
        } catch {
            StandardOutput.diagnose("typingd check: \(error)")
            throw ExitCode(64)
        }
        if let signal = signals.signal {
            StandardOutput.diagnose(
                "typingd check: stopped by signal \(signal) after \(OutputDiff.count(summary.results.count, "transcript"))"
            )
            throw ExitCode(128 + signal)
        }
        if summary.failed > 0 { throw ExitCode(1) }
    }
}

/// Runs transcripts and reports on each: what `typingd check` does, and what the
/// project's own golden tests call.
package struct TranscriptCheck {
    /// Whether to write expected files instead of comparing.
    var bless = false
    /// Whether the engine checks its invariants after every line.
    var checksInvariants = false
    /// True once the run is to stop (a signal): checked between lines and transcripts.
    var stop: @Sendable () -> Bool = { false }

    package init(bless: Bool = false, checksInvariants: Bool = false, stop: @escaping @Sendable () -> Bool = { false })
    {
        (self.bless, self.checksInvariants, self.stop) = (bless, checksInvariants, stop)
    }

    /// The outcome of one transcript.
    struct Result {
        let transcript: Transcript
        /// Nil when it passed; else what differs (or why it could not run).
        let failure: String?
        /// Seconds it took.
        let seconds: Double
    }

    /// The outcomes of a run.
    struct Summary {
        var results: [Result] = []
        var passed: Int { results.count - failed }
        var failed: Int { results.filter { $0.failure != nil }.count }
    }

    /// Checks (or blesses) every transcript under `paths`, calling `report` with the
    /// lines to print, and returns the outcomes (of those it finished, when stopped).
    func run(_ paths: [String], report: (String) -> Void) throws(CheckFailure) -> Summary {
        let transcripts = try Transcript.find(in: paths)
        if transcripts.isEmpty {
            throw CheckFailure(
                "no transcripts (NAME.in.jsonl) under \(paths.map(TextFormat.path).joined(separator: " "))")
        }
        var summary = Summary()
        for transcript in transcripts {
            if stop() { return summary }
            let start = MonotonicClock.nanoseconds()
            let failure = check(transcript, report: report)
            if stop() { return summary }
            summary.results.append(
                Result(
                    transcript: transcript, failure: failure,
                    seconds: Double(MonotonicClock.nanoseconds() - start) / 1e9))
        }
        report("\(summary.passed) passed, \(summary.failed) failed")
        return summary
    }

    /// Checks one transcript; returns what failed, if anything.
    package func check(_ transcript: Transcript, report: (String) -> Void) -> String? {
        let actual: [UInt8]
        let expected: [UInt8]?
        var seeAll: String?
        do {
            let input = try FileBytes.read(transcript.input)
            let words =
                FileBytes.exists(transcript.arguments)
                ? try ArgumentWords.split(String(decoding: try FileBytes.read(transcript.arguments), as: UTF8.self))
                : nil
            seeAll = transcript.seeAll(words: words, recorded: input.withUnsafeBytes { RecordFormat.isRecord($0) })
            actual = try TranscriptRun.output(
                of: input, words: words, folder: transcript.folder ?? ".",
                argumentsFile: words == nil ? nil : transcript.arguments,
                checksInvariants: checksInvariants, stop: stop)
            expected = FileBytes.exists(transcript.expected) ? try FileBytes.read(transcript.expected) : nil
        } catch {
            report("FAIL \(transcript): \(error)")
            return "\(error)"
        }
        // A signal stopped the run: its output is cut short. Neither compare nor
        // bless it (the caller ends without a summary).
        if stop() { return nil }
        if bless {
            guard expected != actual else { return nil }
            do {
                try FileBytes.write(actual, to: transcript.expected)
            } catch {
                report("FAIL \(transcript): \(error)")
                return error.description
            }
            if let expected {
                report(
                    "blessed \(transcript): \(OutputDiff.summary(expected: expected, actual: actual)) in \(TextFormat.path(transcript.expected))"
                )
            } else {
                report(
                    "blessed \(transcript): \(TextFormat.path(transcript.expected)) created, \(OutputDiff.count(OutputDiff.lines(actual).count, "line"))"
                )
            }
            return nil
        }
        guard let expected else {
            let message =
                "no expected output \(TextFormat.path(transcript.expected)) (typingd check --bless creates it)"
            report("FAIL \(transcript): \(message)")
            return message
        }
        guard
            let difference = OutputDiff.describe(
                expected: expected, actual: actual,
                seeAll: seeAll)
        else { return nil }
        report("FAIL \(transcript): the output differs from \(TextFormat.path(transcript.expected))\n\(difference)")
        return difference
    }
}

/// A JUnit XML report, as CI systems read them: one test case per transcript.
package enum JUnitReport {
    static func write(_ summary: TranscriptCheck.Summary, to path: String) throws(CheckFailure) {
        let total = summary.results.reduce(0) { $0 + $1.seconds }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml +=
            "<testsuites name=\"typingd check\" tests=\"\(summary.results.count)\" failures=\"\(summary.failed)\" time=\"\(seconds(total))\">\n"
        xml +=
            "  <testsuite name=\"typingd check\" tests=\"\(summary.results.count)\" failures=\"\(summary.failed)\" errors=\"0\" skipped=\"0\" time=\"\(seconds(total))\">\n"
        for result in summary.results {
            let name = escape(result.transcript.stem)
            xml +=
                "    <testcase classname=\"typingd.transcripts\" name=\"\(name)\" file=\"\(escape(result.transcript.input))\" time=\"\(seconds(result.seconds))\""
            if let failure = result.failure {
                xml +=
                    ">\n      <failure message=\"the output differs from \(escape(result.transcript.expected))\" type=\"OutputMismatch\">"
                xml += escape(failure) + "</failure>\n    </testcase>\n"
            } else {
                xml += "/>\n"
            }
        }
        xml += "  </testsuite>\n</testsuites>\n"
        do {
            try FileBytes.write(Array(xml.utf8), to: path)
        } catch {
            throw CheckFailure(error.description)
        }
    }

    static func seconds(_ value: Double) -> String {
        String(Double(Int(value * 1000)) / 1000)
    }

    /// Text for an XML attribute or element: the five entities escaped, and the
    /// characters XML 1.0 forbids written as `\u{…}`.
    package static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\r": out += "&#13;" // raw, an XML parser reads CR LF as LF
            case "\t", "\n": out.unicodeScalars.append(scalar)
            default:
                let value = scalar.value
                if value < 0x20 || value == 0xFFFE || value == 0xFFFF {
                    out += "\\u{\(String(value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
