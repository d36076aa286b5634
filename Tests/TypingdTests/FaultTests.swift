import Foundation
import Glibc
import Testing

/// Faults at the process level: hostile bytes through the real binary, a signal
/// in the middle of a flood, input cut in the middle of a line.
@Suite("Faults")
struct FaultTests {
    @Test("a hostile stream through the binary: exit 0, every output line one JSON object, one error per bad line")
    func hostileStream() throws {
        var input: [UInt8] = []
        var bad = 0
        let hostile: [[UInt8]] = [
            Array("{".utf8), Array("[".utf8) + Array(repeating: UInt8(ascii: "["), count: 5000),
            [0x00, 0xFF, 0xFE], [0xEF, 0xBB, 0xBF] + Array(#"{"cmd":"stats"}"#.utf8),
            Array(#"{"cmd":"join","conv":"g","user":"\ud800"}"#.utf8), Array("NaN".utf8), [0x0D, 0x0D]
        ]
        for _ in 0..<200 {
            for line in hostile {
                input += line + [0x0A]
                bad += 1
            }
            input += Array(#"{"cmd":"join","conv":"g","user":"a"}"#.utf8) + [0x0A]
        }
        input += Array(#"{"cmd":"stats","pad":""#.utf8) + Array(repeating: UInt8(ascii: "z"), count: 3 << 20)
        bad += 1 // the last line: too long, and without LF
        let file = Daemon.temporaryFile("hostile")
        try Data(input).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let run = try TestProcess.run(["--clock", "manual"], stdin: .file(file))
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        let lines = String(decoding: run.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "", "output ends with LF")
        var errorLines = Set<Int>()
        for line in lines.dropLast() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            if object["event"] as? String == "error", let number = object["line"] as? Int {
                #expect(errorLines.insert(number).inserted, "one error per line")
            }
        }
        #expect(errorLines.count == bad)
        #expect(errorLines.max() == 200 * 8 + 1, "the final line without LF is numbered and reported")
    }

    @Test("SIGTERM in the middle of a flood: exit 0, and the output ends on a whole event")
    func signalMidFlood() throws {
        let daemon = try TestProcess.typingd(["--clock", "manual", "--no-drain"])
        var flood = (0..<500).map { #"{"cmd":"join","conv":"big","user":"u\#($0)"}"# }
        for turn in 0..<2000 {
            flood.append(#"{"cmd":"type","conv":"big","user":"u\#(turn % 500)"}"#)
            flood.append(#"{"cmd":"send","conv":"big","user":"u\#(turn % 500)"}"#)
        }
        let bytes = Array((flood.joined(separator: "\n") + "\n").utf8)
        defer { daemon.stop() }
        let writer = Thread {
            try? daemon.send(bytes: bytes)
            try? daemon.send(bytes: bytes)
        }
        writer.start()
        #expect(try daemon.readLine() != nil, "the flood is being processed")
        daemon.signal(SIGTERM)
        var count = 1
        while let line = try daemon.readLine() {
            count += 1
            #expect(line.hasPrefix("{\"event\":") && line.hasSuffix("}"), "a whole event: \(line.prefix(80))")
        }
        #expect(try daemon.waitForExit() == 0)
        #expect(count < 2 * 2000 * 2 * 499, "it stopped before the end of the flood")
        #expect(daemon.stderr.isEmpty)
    }

    @Test("input that ends in the middle of a line: the partial line is a line")
    func partialLastLine() throws {
        let daemon = try TestProcess.typingd(["--clock", "manual"])
        try daemon.send(
            bytes: Array(#"{"cmd":"stats","id":"whole"}"#.utf8) + [0x0A] + Array(#"{"cmd":"stats","id":"cut"#.utf8))
        try daemon.closeInput()
        let lines = try daemon.readAll()
        #expect(lines.count == 2)
        #expect(object(lines.first)["id"] as? String == "whole")
        #expect(object(lines.last)["code"] as? String == "bad_json" && object(lines.last)["line"] as? Int == 2)
        #expect(try daemon.waitForExit() == 0)
    }

    @Test(
        "started with stdin or stdout closed: a message and exit 74; with stderr closed it still works",
        arguments: [
            ("<&-", Int32(74), "cannot read stdin"), (">&-", Int32(74), "cannot write stdout"),
            ("2>&-", Int32(0), "")
        ])
    func closedDescriptors(redirect: String, status: Int32, message: String) throws {
        let run = try TestProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "echo '{\"cmd\":\"stats\"}' | \"$0\" --clock manual \(redirect)", Daemon.binary.path])
        let stderr = run.errors, stdout = run.output
        #expect(run.status == status)
        #expect(message.isEmpty ? stderr.isEmpty : stderr.contains(message), "\(stderr)")
        if status == 0 { #expect(stdout.hasPrefix(#"{"event":"stats""#)) }
    }
}

/// Signals at awkward moments: while busy with a flood, while blocked on a reader
/// that stopped reading, right after start; and a file-size limit.
@Suite("Signals and limits")
struct SignalTests {
    /// A room of 500 and lines that each make 499 events: one 64 KiB read of it
    /// produces some 650,000 events.
    static let flood: [UInt8] = {
        var lines = (0..<500).map { #"{"cmd":"join","conv":"big","user":"u\#($0)"}"# }
        for turn in 0..<4000 {
            lines.append(#"{"cmd":"type","conv":"big","user":"u\#(turn % 500)"}"#)
            lines.append(#"{"cmd":"send","conv":"big","user":"u\#(turn % 500)"}"#)
        }
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }()

    @Test(
        "a signal during a flood through the parsing threads stops between two lines: the output is a prefix, no line skipped",
        arguments: [1, 2, 4])
    func signalMidFloodIsAPrefix(threads: Int) throws {
        // stats replies count the lines read: in a prefix they are 1, 2, 3, … with none missing.
        let daemon = try TestProcess.typingd(["--clock", "manual", "--no-drain", "--threads", String(threads)])
        defer { daemon.stop() }
        let stats = Array(String(repeating: #"{"cmd":"stats"}"# + "\n", count: 200_000).utf8)
        let writer = Thread { for _ in 0..<3 { try? daemon.send(bytes: stats) } }
        writer.start()
        var lines: [String] = []
        while lines.count < 20_000, let line = try daemon.readLine() { lines.append(line) }
        daemon.signal(SIGTERM)
        lines += try daemon.readAll()
        #expect(try daemon.waitForExit() == 0)
        var expected = 1
        for line in lines {
            guard let number = object(line)["lines"] as? Int else {
                Issue.record("not a stats reply: \(line.prefix(80))")
                break
            }
            guard number == expected else {
                Issue.record(
                    "\(threads) threads: line \(number) answered after line \(expected - 1): a line was skipped")
                break
            }
            expected += 1
        }
        #expect(expected > 20_000 && expected < 600_001, "\(expected - 1) lines answered")
    }

    @Test(
        "a signal while busy is noticed between lines, not after the whole read", arguments: [SIGTERM, SIGHUP, SIGQUIT])
    func promptWhileBusy(signal: Int32) throws {
        let daemon = try TestProcess.typingd(["--clock", "manual", "--no-drain"])
        defer { daemon.stop() }
        let writer = Thread { try? daemon.send(bytes: Self.flood) }
        writer.start()
        #expect(try daemon.readLine() != nil, "the flood is being processed")
        daemon.signal(signal)
        var after = 0
        while after < 100_000, let line = try daemon.readLine() {
            after += 1
            #expect(line.hasPrefix("{\"event\":") && line.hasSuffix("}"), "a whole event: \(line.prefix(80))")
        }
        #expect(try daemon.waitForExit() == 0)
        #expect(daemon.stderr.isEmpty, "\(daemon.stderr)")
        // What was produced before the signal (at most the 256 KiB buffer, the pipe
        // and one step) is written; the rest of the 64 KiB read is not processed.
        #expect(after < 20_000, "\(after) events after the signal")
    }

    @Test("a signal while blocked on a reader that stopped reading: exit 0 within the stall limit")
    func stoppedReader() throws {
        let daemon = try TestProcess.typingd(["--clock", "manual", "--no-drain"])
        defer { daemon.stop() }
        let writer = Thread { try? daemon.send(bytes: Self.flood) }
        writer.start()
        #expect(try daemon.readLine() != nil)
        try daemon.waitUntil("typingd fills the pipe and blocks writing") { daemon.isBlockedWritingOutput }
        let sent = Date()
        daemon.signal(SIGTERM)
        #expect(try daemon.waitForExit(readingOutput: false) == 0)
        let took = Date().timeIntervalSince(sent)
        #expect(took < 3, "exited \(took) s after the signal")
        #expect(daemon.stderr.isEmpty)
    }

    @Test("a signal right after start is kept for the loop, not fatal")
    func signalAtStart() throws {
        for _ in 0..<20 {
            let daemon = try TestProcess.typingd(["--clock", "manual"])
            // The first moment typingd must survive it: once it blocks the signal
            // (before its signal thread and loop exist).
            try daemon.waitUntil("typingd blocks SIGTERM") { daemon.blocks(SIGTERM) }
            daemon.signal(SIGTERM)
            #expect(try daemon.waitForExit() == 0)
        }
    }

    @Test("a file-size limit (SIGXFSZ) is an I/O error: a message and exit 74, not death by signal")
    func fileSizeLimit() throws {
        let file = Daemon.temporaryFile("fsize")
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try TestProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "ulimit -f 8 && exec \"$0\" --clock manual --no-drain > \"$1\"", Daemon.binary.path, file.path],
            stdin: .bytes(Array(Self.flood.prefix(200_000))))
        let stderr = run.errors
        #expect(run.reason == .exit && run.status == 74)
        #expect(stderr.contains("cannot write stdout: File too large"), "\(stderr)")
    }
}
