import Foundation
import FoundationXML
import Glibc
import Testing

/// The users' workflows through the binary: `typingd check` on broken, missing and
/// blessed transcripts with a JUnit report; `--record` and its exact replay;
/// `--format text`.
@Suite("Workflows")
struct WorkflowTests {
    /// A fresh temporary folder.
    static func folder(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("typingd-\(name)-\(getpid())-\(UInt32.random(in: 0 ... .max))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs the binary with `arguments`; stdout, stderr, status.
    static func typingd(_ arguments: [String], input: URL? = nil) throws -> (String, String, Int32) {
        let run = try Daemon.run(arguments, input: input ?? URL(fileURLWithPath: "/dev/null"))
        return (String(decoding: run.stdout, as: UTF8.self), String(decoding: run.stderr, as: UTF8.self), run.status)
    }

    @Test("check: a broken expected file fails with the line and key, --bless repairs it, --junit is valid JUnit XML")
    func check() throws {
        let dir = try Self.folder("check")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = """
        {"cmd":"join","conv":"g","user":"a","name":"Ann"}
        {"cmd":"join","conv":"g","user":"b","name":"Bob"}
        {"cmd":"type","conv":"g","user":"a","at":100}

        """
        try input.write(to: dir.appendingPathComponent("story.in.jsonl"), atomically: true, encoding: .utf8)
        try "--timeout-ms 500 # a comment\n".write(to: dir.appendingPathComponent("story.args"), atomically: true, encoding: .utf8)
        try """
        {"event":"indicator","at":100,"conv":"g","viewer":"b","typing":["a"],"text":"Ann is typing..."}
        {"event":"indicator","at":600,"conv":"g","viewer":"b","typing":[],"text":"-"}

        """.write(to: dir.appendingPathComponent("story.out.jsonl"), atomically: true, encoding: .utf8)
        try "{\"cmd\":\"stats\"}\n".write(to: dir.appendingPathComponent("fresh.in.jsonl"), atomically: true, encoding: .utf8)
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
        let dir = try Self.folder("quoting")
        defer { try? FileManager.default.removeItem(at: dir) }
        try "{\"cmd\":\"stats\"}\n".write(to: dir.appendingPathComponent("q.in.jsonl"), atomically: true, encoding: .utf8)
        try "--max-line-bytes \"100\" '--style' comp\\act\n".write(to: dir.appendingPathComponent("q.args"), atomically: true, encoding: .utf8)
        let (out, _, status) = try Self.typingd(["check", "--bless", dir.path])
        #expect(status == 0, "\(out)")
        try "--style 'loud'\n".write(to: dir.appendingPathComponent("q.args"), atomically: true, encoding: .utf8)
        let (bad, _, badStatus) = try Self.typingd(["check", dir.path])
        #expect(badStatus == 1 && bad.contains("bad options") && bad.contains("loud"), "\(bad)")
    }

    /// A live session with keystrokes, a timeout that fires while typingd is idle,
    /// bad lines, a too-long line, a blank line and replies.
    func liveSession(record: URL, extraLines: [String] = []) throws -> String {
        let daemon = try LiveDaemon(["--record", record.path, "--timeout-ms", "150", "--typing-events",
                                     "--max-line-bytes", "200"])
        defer { daemon.stop() }
        try daemon.send(#"{"cmd":"join","conv":"g","user":"a","name":"Ann","id":1}"#,
                        #"{"cmd":"join","conv":"g","user":"b","name":"Bob"}"#, "",
                        #"{"cmd":"type","conv":"g","user":"a"}"#)
        var lines: [String] = []
        for _ in 0..<5 { lines.append(daemon.readLine() ?? "") }  // ok, started, indicator, stopped, indicator
        #expect(lines[3].contains("\"reason\":\"timeout\""), "the timeout fired while idle: \(lines)")
        try daemon.send(#"{"cmd":"type","conv":"g","user":"b","id":"k"}"#, "{not json", #"{"cmd":"wave"}"#,
                        #"{"cmd":"send","conv":"g","user":"zed","id":"who"}"#, String(repeating: " ", count: 250) + "{}",
                        #"{"cmd":"stats","id":"s"}"#)
        try daemon.send(lines: extraLines)
        try daemon.closeInput()
        lines += daemon.readAll()
        #expect(daemon.waitForExit() == 0)
        return lines.joined(separator: "\n") + "\n"
    }

    @Test("--record: a live session replays byte for byte under --clock manual")
    func recordAndReplay() throws {
        let dir = try Self.folder("record")
        defer { try? FileManager.default.removeItem(at: dir) }
        let record = dir.appendingPathComponent("session.in.jsonl")
        let live = try liveSession(record: record)
        #expect(live.contains("bad_json") && live.contains("unknown_cmd") && live.contains("not_member")
                && live.contains("line_too_long") && live.contains("\"event\":\"stats\""))
        let (replay, error, status) = try Self.typingd(["--clock", "manual", "--timeout-ms", "150", "--typing-events",
                                                         "--max-line-bytes", "200"], input: record)
        #expect(status == 0 && error.isEmpty)
        #expect(replay == live, "the replay differs:\n\(replay)\nlive:\n\(live)")
    }

    @Test("--record: a line refused with clock_mode replays as bad_field, with its line and id; nothing else changes")
    func recordClockMode() throws {
        let dir = try Self.folder("record-clock")
        defer { try? FileManager.default.removeItem(at: dir) }
        let record = dir.appendingPathComponent("session.in.jsonl")
        let live = try liveSession(record: record, extraLines: [#"{"cmd":"tick","at":5,"id":"t"}"#,
                                                                #"{"cmd":"stats","at":1,"id":7}"#])
        let (replay, _, _) = try Self.typingd(["--clock", "manual", "--timeout-ms", "150", "--typing-events",
                                               "--max-line-bytes", "200"], input: record)
        let liveLines = live.split(separator: "\n"), replayLines = replay.split(separator: "\n")
        #expect(liveLines.count == replayLines.count)
        for (a, b) in zip(liveLines, replayLines) where a != b {
            #expect(a.contains("\"code\":\"clock_mode\"") && b.contains("\"code\":\"bad_field\""), "\(a) vs \(b)")
            #expect(object(String(a))["line"] as? Int == object(String(b))["line"] as? Int)
            #expect("\(object(String(a))["id"] ?? "")" == "\(object(String(b))["id"] ?? "")")
        }
        #expect(liveLines.filter { $0.contains("clock_mode") }.count == 2)
    }

    @Test("--record needs the real clock")
    func recordNeedsRealClock() throws {
        let (_, error, status) = try Self.typingd(["--clock", "manual", "--record", "/dev/null"])
        #expect(status == 64 && error.contains("--record needs --clock real"), "\(error)")
    }

    @Test("--format text: one line per event for people")
    func textFormat() throws {
        let dir = try Self.folder("text")
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
        #expect(out == """
        ok line 2 (id 7)
        12.345  team  bob sees: Alice is typing...
        error line 4 bad_json: invalid JSON at column 3: invalid token near 'not'
        15.345  team  bob sees: (nobody is typing)

        """, "\(out)")
    }
}

extension LiveDaemon {
    /// Writes `lines`, each followed by LF.
    func send(lines: [String]) throws {
        guard !lines.isEmpty else { return }
        try send(bytes: Array(lines.map { $0 + "\n" }.joined().utf8))
    }
}
