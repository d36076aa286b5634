import Foundation
import FoundationXML
import Glibc
import Testing

/// The users' workflows through the binary: `typingd check` on broken, missing and
/// blessed transcripts with a JUnit report; `--record` and its exact replay;
/// `--format text`.
@Suite("Workflows")
struct WorkflowTests {
    /// Runs the binary with `arguments`; stdout, stderr, status.
    static func typingd(_ arguments: [String], input: URL? = nil) throws -> (String, String, Int32) {
        let run = try TestProcess.run(arguments, stdin: input.map { .file($0) } ?? .null)
        return (run.output, run.errors, run.status)
    }

    @Test("check: a broken expected file fails with the line and key, --bless repairs it, --junit is valid JUnit XML")
    func check() throws {
        let dir = try Daemon.temporaryFolder("check")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = """
            {"cmd":"join","conv":"g","user":"a","name":"Ann"}
            {"cmd":"join","conv":"g","user":"b","name":"Bob"}
            {"cmd":"type","conv":"g","user":"a","at":100}

            """
        try input.write(to: dir.appendingPathComponent("story.in.jsonl"), atomically: true, encoding: .utf8)
        try "--timeout-ms 500 # a comment\n".write(
            to: dir.appendingPathComponent("story.args"), atomically: true, encoding: .utf8)
        try """
        {"event":"indicator","at":100,"conv":"g","viewer":"b","typing":["a"],"text":"Ann is typing..."}
        {"event":"indicator","at":600,"conv":"g","viewer":"b","typing":[],"text":"-"}

        """.write(to: dir.appendingPathComponent("story.out.jsonl"), atomically: true, encoding: .utf8)
        try "{\"cmd\":\"stats\"}\n".write(
            to: dir.appendingPathComponent("fresh.in.jsonl"), atomically: true, encoding: .utf8)
        let report = dir.appendingPathComponent("report.xml")

        let (out, _, status) = try Self.typingd(["check", dir.path, "--junit", report.path])
        #expect(status == 1)
        #expect(out.contains("line 2: key \"text\": expected \"-\", got \"\""), "\(out)")
        #expect(out.contains("no expected output"), "\(out)")
        #expect(out.hasSuffix("0 passed, 2 failed\n"), "\(out)")
        let xml = try XMLDocument(contentsOf: report)
        #expect(xml.rootElement()?.name == "testsuites")
        #expect(xml.rootElement()?.attribute(forName: "failures")?.stringValue == "2")
        #expect(try xml.nodes(forXPath: "//testcase/failure").count == 2)

        let (blessed, _, blessStatus) = try Self.typingd(["check", "--bless", dir.path])
        #expect(blessStatus == 0 && blessed.contains("1 line changed") && blessed.contains("created"), "\(blessed)")
        let (again, _, againStatus) = try Self.typingd(["check", dir.path])
        #expect(againStatus == 0 && again.hasSuffix("2 passed, 0 failed\n"), "\(again)")
        let (_, error, missing) = try Self.typingd(["check", dir.appendingPathComponent("nothing-here").path])
        #expect(missing == 64 && error.contains("no such file or folder"), "\(error)")
    }

    @Test("check: the .args file's quoting")
    func argumentsQuoting() throws {
        let dir = try Daemon.temporaryFolder("quoting")
        defer { try? FileManager.default.removeItem(at: dir) }
        try "{\"cmd\":\"stats\"}\n".write(
            to: dir.appendingPathComponent("q.in.jsonl"), atomically: true, encoding: .utf8)
        try "--max-line-bytes \"100\" '--style' comp\\act\n".write(
            to: dir.appendingPathComponent("q.args"), atomically: true, encoding: .utf8)
        let (out, _, status) = try Self.typingd(["check", "--bless", dir.path])
        #expect(status == 0, "\(out)")
        try "--style 'loud'\n".write(to: dir.appendingPathComponent("q.args"), atomically: true, encoding: .utf8)
        let (bad, _, badStatus) = try Self.typingd(["check", dir.path])
        #expect(badStatus == 1 && bad.contains("bad options in \(dir.path)/q.args: ") && bad.contains("loud"), "\(bad)")
    }

    @Test("check: past 20 differences, the report counts them all and gives a command that shows every one")
    func everyDifference() throws {
        let dir = try Daemon.temporaryFolder("many")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("m.in.jsonl")
        let stats = (0..<30).map { #"{"cmd":"stats","id":\#($0)}"# }
        try (stats.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        try "--order name\n".write(to: dir.appendingPathComponent("m.args"), atomically: true, encoding: .utf8)
        _ = try Self.typingd(["check", "--bless", dir.path])
        // 30 expected lines changed, and one more line of input: 30 changed, 1 added.
        let expected = dir.appendingPathComponent("m.out.jsonl")
        let blessed = try String(contentsOf: expected, encoding: .utf8)
        #expect(blessed.split(separator: "\n").count == 30)
        try blessed.replacingOccurrences(of: #"{"event":"stats","#, with: #"{"event":"stats","x":1,"#)
            .write(to: expected, atomically: true, encoding: .utf8)
        try (stats.joined(separator: "\n") + "\n" + #"{"cmd":"stats","id":"x"}"# + "\n")
            .write(to: input, atomically: true, encoding: .utf8)
        let (report, _, status) = try Self.typingd(["check", dir.path])
        #expect(status == 1)
        #expect(report.components(separatedBy: "\n  line ").count - 1 == 20, "\(report)")
        #expect(
            report.contains("  … and 11 more differences: 30 lines changed, 1 added in all; to see every one: ")
                && report.contains(" --clock manual --order name < \(input.path) | diff \(expected.path) -"),
            "\(report)")
    }

    /// A live session with keystrokes, a timeout that fires while typingd is idle,
    /// bad lines (one right after that timeout), a too-long line, a blank line, lines
    /// refused with clock_mode, and replies. Returns its output.
    func liveSession(
        record: URL, options: [String] = [], extraLines: [String] = [],
        end: (TestProcess) throws -> Void = { try $0.closeInput() }
    ) throws -> String {
        let daemon = try TestProcess.typingd(
            [
                "--record", record.path, "--timeout-ms", "150", "--typing-events",
                "--max-line-bytes", "200"
            ] + options)
        defer { daemon.stop() }
        try daemon.send(
            #"{"cmd":"join","conv":"g","user":"a","name":"Ann","id":1}"#,
            #"{"cmd":"join","conv":"g","user":"b","name":"Bob"}"#, "",
            #"{"cmd":"type","conv":"g","user":"a"}"#)
        var lines: [String] = []
        for _ in 0..<5 { lines.append(try daemon.readLine() ?? "") } // ok, started, indicator, stopped, indicator
        #expect(lines[3].contains("\"reason\":\"timeout\""), "the timeout fired while idle: \(lines)")
        try daemon.send("{not json") // refused right after the timeout's deadline
        lines.append(try daemon.readLine() ?? "")
        try daemon.send(
            #"{"cmd":"type","conv":"g","user":"b","id":"k"}"#, #"{"cmd":"wave"}"#,
            #"{"cmd":"send","conv":"g","user":"zed","id":"who"}"#, String(repeating: " ", count: 250) + "{}",
            #"{"cmd":"tick","at":5,"id":"t"}"#, #"{"cmd":"stats","at":1,"id":7}"#,
            #"{"cmd":"stats","id":"s"}"#)
        try daemon.send(lines: extraLines)
        try end(daemon)
        lines += try daemon.readAll()
        #expect(try daemon.waitForExit() == 0)
        return lines.joined(separator: "\n") + "\n"
    }

    /// `typingd replay RECORD`'s output, stderr and status.
    func replay(_ record: URL) throws -> (String, String, Int32) {
        try Self.typingd(["replay", record.path])
    }

    @Test(
        "--record: a live session replays byte for byte, errors, timeouts and clock_mode included; check takes the record"
    )
    func recordAndReplay() throws {
        let dir = try Daemon.temporaryFolder("record")
        defer { try? FileManager.default.removeItem(at: dir) }
        let record = dir.appendingPathComponent("session.in.jsonl")
        let live = try liveSession(record: record)
        for code in ["bad_json", "unknown_cmd", "not_member", "line_too_long", "clock_mode", "\"event\":\"stats\""] {
            #expect(live.contains(code), "\(code) is missing from the live session:\n\(live)")
        }
        let (replayed, error, status) = try replay(record)
        #expect(status == 0 && error.isEmpty, "\(status): \(error)")
        #expect(replayed == live, "the replay differs:\n\(replayed)\nlive:\n\(live)")
        // The record is a transcript: bless, then check.
        let (blessed, _, blessStatus) = try Self.typingd(["check", "--bless", record.path])
        #expect(blessStatus == 0 && blessed.contains("created"), "\(blessed)")
        #expect(try String(contentsOf: dir.appendingPathComponent("session.out.jsonl"), encoding: .utf8) == live)
        let (checked, _, checkStatus) = try Self.typingd(["check", dir.path])
        #expect(checkStatus == 0 && checked.hasSuffix("1 passed, 0 failed\n"), "\(checked)")
    }

    @Test("--record: an error right after a timeout's deadline replays after the timeout, as it happened")
    func recordRefusedAfterTimeout() throws {
        let dir = try Daemon.temporaryFolder("record-order")
        defer { try? FileManager.default.removeItem(at: dir) }
        let record = dir.appendingPathComponent("session.in.jsonl")
        let live = try liveSession(record: record)
        let lines = live.split(separator: "\n")
        let timeout = try #require(lines.firstIndex { $0.contains("\"reason\":\"timeout\"") })
        let error = try #require(lines.firstIndex { $0.contains("bad_json") })
        #expect(timeout < error, "\(live)")
        let (replayed, _, _) = try replay(record)
        #expect(replayed == live, "the replay differs:\n\(replayed)\nlive:\n\(live)")
    }

    @Test(
        "--record: a session ended by a signal replays to the same end, draining or not",
        arguments: [[], ["--no-drain"]])
    func recordSignal(_ options: [String]) throws {
        let dir = try Daemon.temporaryFolder("record-signal")
        defer { try? FileManager.default.removeItem(at: dir) }
        let record = dir.appendingPathComponent("session.in.jsonl")
        // A streak of 60 s is live when the signal comes: it must not time out in the replay.
        let live = try liveSession(
            record: record, options: options,
            extraLines: [#"{"cmd":"type","conv":"g","user":"a","timeout_ms":60000,"id":"last"}"#]
        ) { daemon in
            // The last line applied (its reply written) while its streak is live.
            try daemon.waitForOutput(containing: #""id":"last""#)
            daemon.signal(SIGTERM)
        }
        #expect(live.contains("\"id\":\"last\"") && !live.contains("\"at\":60"), "\(live)")
        let text = try String(contentsOf: record, encoding: .utf8)
        #expect(text.split(separator: "\n").last?.hasPrefix("#end ") == true, "\(text)")
        let (replayed, _, status) = try replay(record)
        #expect(status == 0 && replayed == live, "the replay differs:\n\(replayed)\nlive:\n\(live)")
    }

    @Test("--record: a line just under --max-line-bytes is recorded as it was, and replays as applied")
    func recordLongLine() throws {
        let dir = try Daemon.temporaryFolder("record-long")
        defer { try? FileManager.default.removeItem(at: dir) }
        let record = dir.appendingPathComponent("session.in.jsonl")
        let padded = #"{"cmd":"stats","id":"near"}"# + String(repeating: " ", count: 198 - 27)
        #expect(padded.utf8.count == 198)
        let live = try liveSession(record: record, extraLines: [padded])
        #expect(live.contains("\"id\":\"near\""))
        let recorded = try String(contentsOf: record, encoding: .utf8).split(separator: "\n")
        let line = try #require(recorded.first { $0.contains("near") })
        #expect(line.split(separator: "\t", maxSplits: 1)[1] == padded, "recorded as \(line)")
        let (replayed, _, _) = try replay(record)
        #expect(replayed == live, "the replay differs:\n\(replayed)\nlive:\n\(live)")
    }

    @Test("replay: a malformed record stops with exit 65 and says which record line; a missing end is noted")
    func replayMalformed() throws {
        let dir = try Daemon.temporaryFolder("record-bad")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("bad.in.jsonl")
        let header = "#typingd-record v1 --timeout-ms 150\n"
        for (body, expected) in [
            ("12\t{\"cmd\":\"stats\"}\nnonsense\n", "record line 3"),
            ("99999999999999999999\t{}\n", "no time"),
            ("#end 5\n5\t{}\n", "follows the end line"),
            ("5\t{}", "no line break")
        ] {
            try (header + body).write(to: file, atomically: true, encoding: .utf8)
            let (_, error, status) = try replay(file)
            #expect(status == 65 && error.contains(expected), "\(body): \(status) \(error)")
        }
        for (text, expected) in [
            ("{\"cmd\":\"stats\"}\n", "not a record"), ("#typingd-record v9\n#end 0\n", "version v9"),
            ("#typingd-record v1 --style loud\n#end 0\n", "loud"),
            ("#typingd-record v1 --clock manual --late-at clamp\n#end 0\n", "--late-at clamp")
        ] {
            try text.write(to: file, atomically: true, encoding: .utf8)
            let (_, error, status) = try replay(file)
            #expect(status == 65 && error.contains(expected), "\(text): \(status) \(error)")
        }
        try (header + "7\t{\"cmd\":\"stats\"}\n").write(to: file, atomically: true, encoding: .utf8)
        let (out, error, status) = try replay(file)
        #expect(status == 0 && out.contains("\"at\":7") && error.contains("no end line"), "\(out) \(error)")
        let (_, missing, missingStatus) = try Self.typingd(["replay", dir.appendingPathComponent("none").path])
        #expect(missingStatus == 66 && missing.contains("cannot read"), "\(missing)")
    }

    @Test("help: a subcommand's help, and a name that is no subcommand is a usage error (exit 64)")
    func helpPaths() throws {
        // (arguments, exit status, what a page shows on stdout or an error says on stderr)
        let cases: [([String], Int32, String)] = [
            (["help", "check"], 0, "golden transcripts"),
            (["help"], 0, "SUBCOMMANDS:"),
            (["help", "help"], 0, "help"),
            (["help", "chek"], 64, "'chek' is not a subcommand of typingd (its subcommands: check, replay)"),
            (["help", "check", "replay"], 64, "'replay' is not a subcommand of typingd check (it has none)"),
            (["--clock", "manual", "help", "chek"], 64, "'chek' is not a subcommand of typingd"),
            (["help", "help", "chek"], 64, "'chek' is not a subcommand of typingd help (it has none)"),
            (["--phrases", "help", "help", "chek"], 64, "'chek' is not a subcommand of typingd (")
        ]
        for (arguments, expected, text) in cases {
            let (page, error, status) = try Self.typingd(arguments)
            let said = expected == 0 ? page : error
            #expect(status == expected && said.contains(text), "\(arguments): \(said)")
        }
    }

    @Test("--record needs the real clock")
    func recordNeedsRealClock() throws {
        let (_, error, status) = try Self.typingd(["--clock", "manual", "--record", "/dev/null"])
        #expect(status == 64 && error.contains("--record needs --clock real"), "\(error)")
    }

    @Test("--late-at clamp: late stamps are applied at the current time; it needs the manual clock")
    func lateAt() throws {
        let dir = try Daemon.temporaryFolder("late-at")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.jsonl")
        try """
        {"cmd":"join","conv":"g","user":"a","name":"Ann","at":10}
        {"cmd":"join","conv":"g","user":"b","name":"Bob","at":5}
        {"cmd":"type","conv":"g","user":"a","at":3}

        """.write(to: input, atomically: true, encoding: .utf8)
        let (clamped, _, status) = try Self.typingd(["--clock", "manual", "--late-at", "clamp"], input: input)
        #expect(status == 0)
        #expect(
            clamped == """
                {"event":"indicator","at":10,"conv":"g","viewer":"b","typing":["a"],"text":"Ann is typing..."}
                {"event":"indicator","at":3010,"conv":"g","viewer":"b","typing":[],"text":""}

                """)
        let (refused, _, _) = try Self.typingd(["--clock", "manual"], input: input)
        #expect(
            refused.contains(#""line":2,"code":"time_backwards""#)
                && refused.contains(#""line":3,"code":"time_backwards""#))
        let (_, error, realStatus) = try Self.typingd(["--late-at", "clamp"])
        #expect(realStatus == 64 && error.contains("--late-at clamp needs --clock manual"), "\(error)")
        let (_, bad, badStatus) = try Self.typingd(["--clock", "manual", "--late-at", "later"])
        #expect(badStatus == 64 && bad.contains("late-at"), "\(bad)")
    }

    @Test("--format text: one line per event for people")
    func textFormat() throws {
        let dir = try Daemon.temporaryFolder("text")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.jsonl")
        try """
        {"cmd":"join","conv":"team","user":"alice","name":"Alice"}
        {"cmd":"join","conv":"team","user":"bob","name":"Bob","id":7}
        {"cmd":"type","conv":"team","user":"alice","at":12345}
        not json

        """.write(to: input, atomically: true, encoding: .utf8)
        let (out, _, status) = try Self.typingd(["--clock", "manual", "--format", "text"], input: input)
        #expect(status == 0)
        #expect(
            out == """
                0.000  ok line 2 (id 7)
                12.345  team  bob sees: Alice is typing...
                12.345  error line 4 bad_json: invalid JSON at column 3: invalid token near 'not'
                15.345  team  bob sees: (nobody is typing)

                """, "\(out)")
    }
}
