import Foundation
import Glibc
import Testing

/// `typingd check` on folders that loop, on files that are not regular,
/// on a disk that fills up, and under signals.
@Suite("check: hostile paths, full disks, signals", .timeLimit(.minutes(2)))
struct CheckFilesTests {
    static let transcript = #"{"cmd":"join","conv":"g","user":"a"}"# + "\n"

    /// A new temporary folder with one passing transcript.
    static func folderWithTranscript(_ name: String) throws -> URL {
        let dir = try Daemon.temporaryFolder(name)
        try Self.transcript.write(to: dir.appendingPathComponent("x.in.jsonl"), atomically: true, encoding: .utf8)
        try "".write(to: dir.appendingPathComponent("x.out.jsonl"), atomically: true, encoding: .utf8)
        return dir
    }

    @Test("two symlinks to their own folder: each folder is walked once, the transcript runs once")
    func symlinkLoops() throws {
        let dir = try Self.folderWithTranscript("loops")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createSymbolicLink(
            atPath: dir.appendingPathComponent("a").path, withDestinationPath: ".")
        try FileManager.default.createSymbolicLink(
            atPath: dir.appendingPathComponent("b").path, withDestinationPath: ".")
        let (out, _, status) = try WorkflowTests.typingd(["check", dir.path])
        #expect(status == 0 && out.hasSuffix("1 passed, 0 failed\n"), "\(status): \(out)")
    }

    @Test("a FIFO and a symlink to /dev/zero named like inputs fail at once with a clear message")
    func notRegular() throws {
        let dir = try Self.folderWithTranscript("special")
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(mkfifo(dir.appendingPathComponent("fifo.in.jsonl").path, 0o644) == 0)
        try FileManager.default.createSymbolicLink(
            atPath: dir.appendingPathComponent("zero.in.jsonl").path,
            withDestinationPath: "/dev/zero")
        let (out, _, status) = try WorkflowTests.typingd(["check", dir.path])
        #expect(status == 1, "\(out)")
        #expect(out.contains("fifo.in.jsonl: it is a FIFO, not a regular file"), "\(out)")
        #expect(out.contains("zero.in.jsonl: it is a character device, not a regular file"), "\(out)")
        #expect(out.hasSuffix("1 passed, 2 failed\n"), "\(out)")
    }

    @Test("a transcript is never skipped in silence: a dangling symlink fails, a name that is not UTF-8 stops check")
    func neverSkipped() throws {
        let dir = try Self.folderWithTranscript("unnamed")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createSymbolicLink(
            atPath: dir.appendingPathComponent("gone.in.jsonl").path,
            withDestinationPath: "/nonexistent/gone")
        let (out, _, status) = try WorkflowTests.typingd(["check", dir.path])
        #expect(
            status == 1 && out.contains("gone.in.jsonl: No such file") && out.hasSuffix("1 passed, 1 failed\n"),
            "\(out)")
        try FileManager.default.removeItem(at: dir.appendingPathComponent("gone.in.jsonl"))
        // A folder named with the byte 0xFF, holding a transcript.
        let raw = Array(dir.path.utf8) + Array("/bad".utf8) + [0xFF, 0]
        #expect(
            raw.withUnsafeBufferPointer {
                mkdir(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), 0o755)
            } == 0)
        let (bad, errors, badStatus) = try WorkflowTests.typingd(["check", dir.path])
        #expect(badStatus == 64 && bad.isEmpty, "\(badStatus): \(bad)")
        #expect(errors.contains("/bad\\xFF: a folder whose name is not UTF-8"), "\(errors)")
        _ = raw.withUnsafeBufferPointer { rmdir(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self)) }
    }

    @Test("--bless on a full disk (a file-size limit) fails and leaves the old expected file whole")
    func blessFullDisk() throws {
        let dir = try Daemon.temporaryFolder("full")
        defer { try? FileManager.default.removeItem(at: dir) }
        var input = Self.transcript
        for index in 0..<40 { input += #"{"cmd":"join","conv":"g","user":"u\#(index)","id":\#(index)}"# + "\n" }
        try input.write(to: dir.appendingPathComponent("x.in.jsonl"), atomically: true, encoding: .utf8)
        let old = "the old expected output\n"
        try old.write(to: dir.appendingPathComponent("x.out.jsonl"), atomically: true, encoding: .utf8)
        // ulimit -f 1: no file may grow past 512 bytes; the blessed output is larger.
        let run = try TestProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "ulimit -f 1 && exec \"$0\" check --bless \"$1\"", Daemon.binary.path, dir.path],
            stderr: .null)
        let report = run.output
        #expect(run.status == 1, "\(report)")
        #expect(report.contains("cannot write"), "\(report)")
        #expect(try String(contentsOf: dir.appendingPathComponent("x.out.jsonl"), encoding: .utf8) == old)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter {
            $0.hasPrefix("x.out.jsonl.")
        }
        #expect(leftovers.isEmpty, "temporary files left: \(leftovers)")
    }

    @Test(
        "--junit and --bless replace only regular files: a FIFO is refused and stays, a symlink's target is written and the link stays"
    )
    func onlyRegularFilesReplaced() throws {
        let dir = try Daemon.temporaryFolder("targets")
        defer { try? FileManager.default.removeItem(at: dir) }
        try #"{"cmd":"stats"}"#.write(to: dir.appendingPathComponent("t.in.jsonl"), atomically: true, encoding: .utf8)
        let fifo = dir.appendingPathComponent("report.fifo").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let (_, error, status) = try WorkflowTests.typingd(["check", dir.path, "--junit", fifo])
        #expect(status == 64 && error.contains("FIFO, not a regular file"), "\(status) \(error)")
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "the FIFO is still a FIFO")
        // A symlinked report and a symlinked golden: the targets change, the links stay.
        let goldens = dir.appendingPathComponent("goldens")
        try FileManager.default.createDirectory(at: goldens, withIntermediateDirectories: true)
        try "old\n".write(to: goldens.appendingPathComponent("t.out.jsonl"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: dir.appendingPathComponent("t.out.jsonl").path,
            withDestinationPath: "goldens/t.out.jsonl")
        try "".write(to: dir.appendingPathComponent("report.real"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: dir.appendingPathComponent("report.xml").path,
            withDestinationPath: "report.real")
        let (_, _, blessStatus) = try WorkflowTests.typingd([
            "check", "--bless", dir.appendingPathComponent("t.in.jsonl").path,
            "--junit", dir.appendingPathComponent("report.xml").path
        ])
        #expect(blessStatus == 0)
        for link in ["t.out.jsonl", "report.xml"] {
            #expect(
                lstat(dir.appendingPathComponent(link).path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK,
                "\(link) is still a link")
        }
        #expect(
            try String(contentsOf: goldens.appendingPathComponent("t.out.jsonl"), encoding: .utf8).contains(
                "\"event\":\"stats\""))
        #expect(
            try String(contentsOf: dir.appendingPathComponent("report.real"), encoding: .utf8).contains("<testsuites"))
    }

    @Test("check's report escapes what a terminal would act on, from file names and expected files")
    func reportIsTerminalSafe() throws {
        let dir = try Daemon.temporaryFolder("escape")
        defer { try? FileManager.default.removeItem(at: dir) }
        let stem = dir.appendingPathComponent("x\u{1B}]0;title\u{07}y").path
        try #"{"cmd":"stats"}"#.write(toFile: stem + ".in.jsonl", atomically: true, encoding: .utf8)
        try "\u{1B}[31mred\u{85}\n".write(toFile: stem + ".out.jsonl", atomically: true, encoding: .utf8)
        let (out, _, status) = try WorkflowTests.typingd(["check", dir.path])
        #expect(status == 1 && out.contains("FAIL"), "\(out)")
        #expect(
            !out.unicodeScalars.contains { $0 != "\n" && ($0.value < 0x20 || (0x7F...0x9F).contains($0.value)) },
            "\(out.debugDescription)")
        #expect(out.contains("\\u{1b}]0;title\\u{7}y"), "\(out)")
    }

    @Test(
        "SIGTERM and SIGINT stop check between lines: exit 128 + N, no summary, no verdict on the cut run, nothing blessed",
        arguments: [SIGTERM, SIGINT], [false, true])
    func signals(_ signal: Int32, bless: Bool) throws {
        let dir = try Daemon.temporaryFolder("signal")
        defer { try? FileManager.default.removeItem(at: dir) }
        let line = #"{"cmd":"stats"}"# + "\n"
        try String(repeating: line, count: 2_000_000).write(
            to: dir.appendingPathComponent("big.in.jsonl"), atomically: true, encoding: .utf8)
        let expected = dir.appendingPathComponent("big.out.jsonl")
        try "the golden before\n".write(to: expected, atomically: true, encoding: .utf8)
        // One transcript that passes at once, before the big one ("a" < "big").
        try Self.transcript.write(to: dir.appendingPathComponent("a.in.jsonl"), atomically: true, encoding: .utf8)
        try "".write(to: dir.appendingPathComponent("a.out.jsonl"), atomically: true, encoding: .utf8)
        let check = try TestProcess(Daemon.binary, ["check", dir.path] + (bless ? ["--bless"] : []))
        // Between lines of the big transcript: check has read all of it (files are
        // read whole, in name order, each after the one before was checked).
        let big =
            try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("big.in.jsonl").path)[.size]
            as? Int ?? 0
        try check.waitUntil("check reads big.in.jsonl") { check.bytesRead >= big }
        check.signal(signal)
        let start = Date()
        let status = try check.waitForExit()
        let report = try check.readAll().joined(separator: "\n")
        let message = check.stderr
        #expect(status == 128 + signal, "\(report)")
        #expect(message == "typingd check: stopped by signal \(signal) after 1 transcript\n", "\(message)")
        // A signal is noticed between two lines, not at the end of the transcript
        // (which takes seconds in a debug build): generous for a busy machine.
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(!report.contains("passed"), "\(report)")
        #expect(!report.contains("FAIL") && !report.contains("blessed"), "the cut run was judged: \(report)")
        #expect(try String(contentsOf: expected, encoding: .utf8) == "the golden before\n")
    }
}
