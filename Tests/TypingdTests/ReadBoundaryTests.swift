import Foundation
import Glibc
import Testing

/// The daemon given inputs that end exactly where a read ends — the last read
/// fills the read buffer and the ring of batches is full at the end of input. It
/// must exit 0 at once with every reply written, with any number of threads and
/// either clock.
@Suite("Inputs ending on read boundaries")
struct ReadBoundaryTests {
    /// `count` stats commands, one per line, each exactly `lineBytes` long with its LF.
    static func stats(_ count: Int, lineBytes: Int = 16) throws -> URL {
        let line = #"{"cmd":"stats"}"# + String(repeating: " ", count: lineBytes - 16) + "\n"
        let url = Daemon.temporaryFile("boundary-\(count)-\(lineBytes)", suffix: ".jsonl")
        try String(repeating: line, count: count).write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    @Test(
        "the reported case: 4096 lines of 16 bytes (64 KiB, the default read) with --threads 2 exits with 4096 replies",
        arguments: ["manual", "real"])
    func reported(clock: String) throws {
        let input = try Self.stats(4096)
        defer { try? FileManager.default.removeItem(at: input) }
        let run = try TestProcess.run(["--clock", clock, "--threads", "2"], stdin: .file(input))
        #expect(run.status == 0, "exit \(run.status): \(String(decoding: run.stderr, as: UTF8.self))")
        #expect(run.stdout.split(separator: 0x0A).count == 4096)
    }

    @Test(
        "inputs of exactly k reads, for several read sizes, 1, 2 and 4 threads, both clocks",
        arguments: ["manual", "real"], [1, 2, 4])
    func boundaries(clock: String, threads: Int) throws {
        for (read, lineBytes) in [(64, 16), (300, 20), (4096, 32), (1 << 16, 16)] {
            for reads in [1, 2, 7] {
                let count = read * reads / lineBytes
                guard count * lineBytes == read * reads else { continue }
                let input = try Self.stats(count, lineBytes: lineBytes)
                defer { try? FileManager.default.removeItem(at: input) }
                let run = try TestProcess.run(
                    ["--clock", clock, "--threads", String(threads), "--read-buffer", String(read)],
                    stdin: .file(input))
                #expect(
                    run.status == 0,
                    "read \(read) × \(reads): exit \(run.status): \(String(decoding: run.stderr, as: UTF8.self))")
                let replies = run.stdout.split(separator: 0x0A)
                #expect(
                    replies.count == count,
                    "read \(read) × \(reads), \(threads) threads: \(replies.count) of \(count) replies")
                #expect(String(decoding: replies.last ?? Data(), as: UTF8.self).contains("\"lines\":\(count),"))
            }
        }
    }
}
