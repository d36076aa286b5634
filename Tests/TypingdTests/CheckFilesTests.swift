import Foundation
import Glibc
import Testing

/// D7 and D8: `typingd check` on folders that loop, on files that are not regular,
/// on a disk that fills up, and under signals.
@Suite("check: hostile paths, full disks, signals", .timeLimit(.minutes(2)))
struct CheckFilesTests {
    static let transcript = #"{"cmd":"join","conv":"g","user":"a"}"# + "\n"

    /// A folder with one passing transcript.
    static func folder(_ name: String) throws -> URL {
        let dir = try WorkflowTests.folder(name)
        try Self.transcript.write(to: dir.appendingPathComponent("x.in.jsonl"), atomically: true, encoding: .utf8)
        try "".write(to: dir.appendingPathComponent("x.out.jsonl"), atomically: true, encoding: .utf8)
        return dir
    }

    @Test("two symlinks to their own folder: each folder is walked once, the transcript runs once")
    func symlinkLoops() throws {
        let dir = try Self.folder("loops")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("a").path, withDestinationPath: ".")
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("b").path, withDestinationPath: ".")
        let (out, _, status) = try WorkflowTests.typingd(["check", dir.path])
        #expect(status == 0 && out.hasSuffix("1 passed, 0 failed\n"), "\(status): \(out)")
    }

    @Test("a FIFO and a symlink to /dev/zero named like inputs fail at once with a clear message")
    func notRegular() throws {
        let dir = try Self.folder("special")
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(mkfifo(dir.appendingPathComponent("fifo.in.jsonl").path, 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("zero.in.jsonl").path,
                                                   withDestinationPath: "/dev/zero")
        let (out, _, status) = try WorkflowTests.typingd(["check", dir.path])
        #expect(status == 1, "\(out)")
        #expect(out.contains("fifo.in.jsonl: it is a FIFO, not a regular file"), "\(out)")
        #expect(out.contains("zero.in.jsonl: it is a character device, not a regular file"), "\(out)")
        #expect(out.hasSuffix("1 passed, 2 failed\n"), "\(out)")
    }

    @Test("--bless on a full disk (a file-size limit) fails and leaves the old expected file whole")
    func blessFullDisk() throws {
        let dir = try WorkflowTests.folder("full")
        defer { try? FileManager.default.removeItem(at: dir) }
        var input = Self.transcript
        for index in 0..<40 { input += #"{"cmd":"join","conv":"g","user":"u\#(index)","id":\#(index)}"# + "\n" }
        try input.write(to: dir.appendingPathComponent("x.in.jsonl"), atomically: true, encoding: .utf8)
        let old = "the old expected output\n"
        try old.write(to: dir.appendingPathComponent("x.out.jsonl"), atomically: true, encoding: .utf8)
        // ulimit -f 1: no file may grow past 512 bytes; the blessed output is larger.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -f 1 && exec \"$0\" check --bless \"$1\"", Daemon.binary.path, dir.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let report = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1, "\(report)")
        #expect(report.contains("cannot write"), "\(report)")
        #expect(try String(contentsOf: dir.appendingPathComponent("x.out.jsonl"), encoding: .utf8) == old)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("x.out.jsonl.") }
        #expect(leftovers.isEmpty, "temporary files left: \(leftovers)")
    }

    @Test("SIGTERM and SIGINT stop check between lines: exit 128 + N, no summary line", arguments: [SIGTERM, SIGINT])
    func signals(_ signal: Int32) throws {
        let dir = try WorkflowTests.folder("signal")
        defer { try? FileManager.default.removeItem(at: dir) }
        let line = #"{"cmd":"stats"}"# + "\n"
        try String(repeating: line, count: 2_000_000).write(to: dir.appendingPathComponent("big.in.jsonl"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = Daemon.binary
        process.arguments = ["check", dir.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        usleep(400_000)
        kill(process.processIdentifier, signal)
        let start = Date()
        let report = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 128 + signal, "\(report)")
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(!report.contains("passed"), "\(report)")
    }
}
