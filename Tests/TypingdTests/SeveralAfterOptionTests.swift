import Foundation
import Testing

/// `--several-after K` through the binary: a bad value stops typingd before any
/// input with exit 64, `--help` teaches it, `check`'s `NAME.args` take it, and a
/// record carries it so that `replay` writes the session again (a record without
/// it still replays).
@Suite("--several-after")
struct SeveralAfterOptionTests {
    /// Four typers in a room with a viewer who does not type.
    static let input =
        [
            #"{"cmd":"join","conv":"g","user":"v","name":"Vic"}"#,
            #"{"cmd":"join","conv":"g","user":"a","name":"Ann"}"#,
            #"{"cmd":"join","conv":"g","user":"b","name":"Ben"}"#,
            #"{"cmd":"join","conv":"g","user":"c","name":"Cy"}"#,
            #"{"cmd":"join","conv":"g","user":"d","name":"Dee"}"#,
            #"{"cmd":"type","conv":"g","user":"a"}"#,
            #"{"cmd":"type","conv":"g","user":"b"}"#,
            #"{"cmd":"type","conv":"g","user":"c"}"#,
            #"{"cmd":"type","conv":"g","user":"d"}"#
        ].joined(separator: "\n") + "\n"

    @Test(
        "a value out of 1…2147483647, or not a number, is a message on stderr and exit 64, before any input",
        arguments: [
            ("0", "--several-after must be from 1 to 2147483647, not 0"),
            ("-1", "--several-after must be from 1 to 2147483647, not -1"),
            ("2147483648", "--several-after must be from 1 to 2147483647, not 2147483648"),
            ("many", "--several-after"),
            ("", "--several-after")
        ])
    func badValue(value: String, says: String) throws {
        let run = try TestProcess.run(
            ["--clock", "manual", "--several-after", value], stdin: .bytes(Array(Self.input.utf8)))
        #expect(run.status == 64, "\(value): \(run.status)")
        #expect(run.output.isEmpty, "\(value): wrote \(run.output)")
        #expect(run.errors.contains(says), "\(value): \(run.errors)")
    }

    @Test("1 and 2147483647 are taken")
    func limits() throws {
        for (value, text) in [
            ("1", "Several people are typing..."), ("2147483647", "Ann, Ben, and 2 others are typing...")
        ] {
            let run = try TestProcess.run(
                ["--clock", "manual", "--no-drain", "--several-after", value],
                stdin: .bytes(Array(Self.input.utf8)))
            #expect(run.status == 0 && run.errors.isEmpty, "\(value): \(run.status) \(run.errors)")
            #expect(
                run.output.split(separator: "\n").contains { $0.contains(#""viewer":"v""#) && $0.contains(text) },
                "\(value): \(run.output)")
        }
    }

    @Test("--help teaches it: what it does, an example, its range and its default")
    func help() throws {
        let help = try ManualPagesTests.help([])
        let start = try #require(help.range(of: "--several-after <n>"), "\(help)")
        let text = help[start.lowerBound...].prefix(600)
        for words in [
            "names nobody", "'several'", "Several people are typing...", "from 1 to 2147483647", "(default: none)",
            "do not change"
        ] {
            #expect(text.contains(words), "--help says not \"\(words)\": \(text)")
        }
    }

    @Test("a transcript's NAME.args may give it")
    func checkArgs() throws {
        let dir = try Daemon.temporaryFolder("several-args")
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.input.write(to: dir.appendingPathComponent("big.in.jsonl"), atomically: true, encoding: .utf8)
        try "--several-after 3 --no-drain\n".write(
            to: dir.appendingPathComponent("big.args"), atomically: true, encoding: .utf8)
        let (report, _, status) = try WorkflowTests.typingd(["check", "--bless", dir.path])
        #expect(status == 0, "\(report)")
        let out = try String(contentsOf: dir.appendingPathComponent("big.out.jsonl"), encoding: .utf8)
        #expect(
            out.contains(#""viewer":"v","typing":["a","b","c","d"],"text":"Several people are typing...""#), "\(out)")
        try "--several-after 0\n".write(to: dir.appendingPathComponent("big.args"), atomically: true, encoding: .utf8)
        let (bad, _, badStatus) = try WorkflowTests.typingd(["check", dir.path])
        #expect(badStatus == 1 && bad.contains("big.args") && bad.contains("--several-after"), "\(bad)")
    }

    @Test(
        "a record carries --several-after, and replays the session byte for byte; a record without it replays without it"
    )
    func record() throws {
        let dir = try Daemon.temporaryFolder("several-record")
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = dir.appendingPathComponent("made.rec")
        let live = try TestProcess.run(
            ["--record", made.path, "--timeout-ms", "100", "--several-after", "2"],
            stdin: .bytes(Array(Self.input.utf8)))
        #expect(
            live.status == 0 && live.output.contains("Several people are typing..."), "\(live.status) \(live.output)")
        let record = try String(contentsOf: made, encoding: .utf8)
        let header = try #require(record.split(separator: "\n").first)
        #expect(header.hasSuffix(" --several-after 2") || header.contains(" --several-after 2 "), "\(header)")
        let (replayed, error, status) = try RecordReplayTests.replay(made)
        #expect(status == 0 && error.isEmpty && replayed == live.output, "\(status) \(error)\n\(replayed)")
        // Without the option the header names none, and a replay phrases as usual.
        let plain = dir.appendingPathComponent("plain.rec")
        let unlimited = try TestProcess.run(
            ["--record", plain.path, "--timeout-ms", "100"], stdin: .bytes(Array(Self.input.utf8)))
        let plainRecord = try String(contentsOf: plain, encoding: .utf8)
        #expect(!plainRecord.contains("several"), "\(plainRecord)")
        let (again, _, againStatus) = try RecordReplayTests.replay(plain)
        #expect(againStatus == 0 && again == unlimited.output && !again.contains("Several"), "\(again)")
    }

    @Test("a record written by hand with --several-after in its header replays with it")
    func handWritten() throws {
        let dir = try Daemon.temporaryFolder("several-hand")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("hand.rec")
        var record = "#typingd-record v2 --timeout-ms 100 --several-after 1\n"
        for line in Self.input.split(separator: "\n").prefix(7) { record += "10\t\(line)\n" }
        record += "#end 10\n"
        try record.write(to: file, atomically: true, encoding: .utf8)
        let (out, error, status) = try RecordReplayTests.replay(file)
        #expect(status == 0 && error.isEmpty, "\(status) \(error)")
        #expect(
            out.contains(
                #"{"event":"indicator","at":10,"conv":"g","viewer":"v","typing":["a","b"],"text":"Several people are typing..."}"#
            ), "\(out)")
    }
}
