import Foundation
import Testing

/// Records whose line ends changed after typingd wrote them (a checkout with git's
/// autocrlf, a Windows editor): a record whose lines all end in CR LF plays as the
/// record it was made from, in `replay` and in `check` (`--bless` included), with its
/// end line or without; a CR where typingd writes none (line ends mixed, a CR in the
/// header, in a table line, in an end line) is refused, naming the record line, and
/// never blessed. The CRs of an input line's bytes are the session's, in either form.
@Suite("Records with CR LF line ends")
struct RecordLineEndTests {
    /// `bytes` with a CR put before every LF, as a checkout with autocrlf does.
    static func crlf<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        var out: [UInt8] = []
        for byte in bytes {
            if byte == 0x0A { out.append(0x0D) }
            out.append(byte)
        }
        return out
    }

    /// The lines of `record`, each with its LF.
    static func lines(_ record: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        for (index, byte) in record.enumerated() where byte == 0x0A {
            lines.append(record[start...index])
            start = index + 1
        }
        return lines
    }

    /// A record of a real session (``WorkflowTests/liveSession(record:options:extraLines:end:)``:
    /// a blank line, refused lines, a too-long line, timeouts), with its end line or
    /// without it (as a killed typingd leaves it), and what that record replays.
    static func session(in dir: URL, withEnd: Bool) throws -> (record: [UInt8], output: String) {
        let made = dir.appendingPathComponent("made.rec")
        let live = try WorkflowTests().liveSession(record: made)
        var record = try [UInt8](Data(contentsOf: made))
        try FileManager.default.removeItem(at: made)
        let lines = Self.lines(record)
        #expect(
            lines.count > 10 && lines.last?.starts(with: "#end ".utf8) == true,
            "\(String(decoding: record, as: UTF8.self))")
        if !withEnd { record = Array(lines.dropLast().joined()) }
        let plain = dir.appendingPathComponent("plain.rec")
        try Data(record).write(to: plain)
        defer { try? FileManager.default.removeItem(at: plain) }
        let (output, error, status) = try RecordReplayTests.replay(plain)
        #expect(status == 0 && error.contains("no end line") == !withEnd, "\(status) \(error)")
        if withEnd { #expect(output == live, "the LF record replays otherwise:\n\(output)\nlive:\n\(live)") }
        return (record, output)
    }

    @Test(
        "replay plays a record whose lines all end in CR LF as the LF record it was made from, with or without its end line",
        arguments: [true, false])
    func replayCRLF(withEnd: Bool) throws {
        let dir = try Daemon.temporaryFolder("record-crlf-replay")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (record, expected) = try Self.session(in: dir, withEnd: withEnd)
        let file = dir.appendingPathComponent("crlf.rec")
        try Data(Self.crlf(record)).write(to: file)
        let (output, error, status) = try RecordReplayTests.replay(file)
        #expect(status == 0 && error.contains("no end line") == !withEnd, "\(status) \(error)")
        #expect(output == expected, "the CR LF record replays otherwise:\n\(output)\nLF record:\n\(expected)")
    }

    @Test(
        "check passes a record whose lines all end in CR LF against its LF record's output, and --bless writes that output",
        arguments: [true, false])
    func checkCRLF(withEnd: Bool) throws {
        let dir = try Daemon.temporaryFolder("record-crlf-check")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (record, expected) = try Self.session(in: dir, withEnd: withEnd)
        let transcripts = dir.appendingPathComponent("t")
        try FileManager.default.createDirectory(at: transcripts, withIntermediateDirectories: true)
        try Data(Self.crlf(record)).write(to: transcripts.appendingPathComponent("s.in.jsonl"))
        let out = transcripts.appendingPathComponent("s.out.jsonl")
        try expected.write(to: out, atomically: true, encoding: .utf8)
        let (checked, _, checkStatus) = try WorkflowTests.typingd(["check", transcripts.path])
        #expect(checkStatus == 0 && checked.hasSuffix("1 passed, 0 failed\n"), "\(checked)")

        try FileManager.default.removeItem(at: out)
        let (blessed, _, blessStatus) = try WorkflowTests.typingd(["check", "--bless", transcripts.path])
        #expect(blessStatus == 0, "\(blessed)")
        let written = try? String(contentsOf: out, encoding: .utf8)
        #expect(written == expected, "--bless wrote:\n\(written ?? "(nothing)")\nLF record:\n\(expected)")
    }

    @Test(
        "an input line's CRs (inside it, or a second one before its LF) are the session's, in a record with LF or CR LF line ends"
    )
    func inputLineCRs() throws {
        let dir = try Daemon.temporaryFolder("record-crlf-input")
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = dir.appendingPathComponent("made.rec")
        let input =
            #"{"cmd":"join","conv":"g","user":"a","name":"Ann",\#r"id":1}"# + "\n"
            + "\r\r\n" // not blank: a CR is left
            + #"{"cmd":"join","conv":"g","user":"b","name":"Bob"}"# + "\r\r\n" // one CR kept, JSON white space
            + #"{"cmd":"type","conv":"g","user":"a"}"# + "\r\n"
            + "x\ry\r\r\n"
        let live = try TestProcess.run(
            ["--record", made.path, "--timeout-ms", "100", "--typing-events"],
            stdin: .bytes(Array(input.utf8)))
        #expect(
            live.status == 0 && live.output.contains("Ann is typing") && live.output.contains("\"line\":2"),
            "\(live.output)")
        let record = try [UInt8](Data(contentsOf: made))
        #expect(
            Self.lines(record).filter { $0.dropLast().last == 0x0D }.count == 3,
            "\(String(decoding: record, as: UTF8.self))")
        let converted = dir.appendingPathComponent("s.in.jsonl")
        try Data(Self.crlf(record)).write(to: converted)
        for file in [made, converted] {
            let (output, error, status) = try RecordReplayTests.replay(file)
            #expect(
                status == 0 && error.isEmpty && output == live.output,
                "\(file.lastPathComponent): \(status) \(error)\n\(output)")
        }
        try live.output.write(to: dir.appendingPathComponent("s.out.jsonl"), atomically: true, encoding: .utf8)
        let (checked, _, checkStatus) = try WorkflowTests.typingd(["check", converted.path])
        #expect(checkStatus == 0, "\(checked)")
    }

    /// A record of a real session with the line ends of `record`'s lines changed:
    /// the line at each index of `crlf` ends in CR LF, the others in LF.
    static func mixed(_ record: [UInt8], crlf: Set<Int>) -> [UInt8] {
        Array(
            lines(record).enumerated().map { index, line in
                crlf.contains(index) ? line.dropLast() + [0x0D, 0x0A] : Array(line)
            }
            .joined())
    }

    @Test(
        "a CR where typingd writes none is refused by replay (65) and by check --bless, naming the record line; nothing is blessed"
    )
    func strayCRs() throws {
        let dir = try Daemon.temporaryFolder("record-crlf-stray")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (record, _) = try Self.session(in: dir, withEnd: true)
        let lines = Self.lines(record)
        let count = lines.count
        let tooLong = try #require(
            lines.firstIndex { line in
                line.dropLast().last == UInt8(ascii: "!") && line.first.map { (0x30...0x39).contains($0) } == true
            })
        let header = RecordPreambleOnlyTests.header, table = RecordPreambleOnlyTests.table
        // The header with a CR for a space: the same options to a reader that takes a CR for white space.
        let strayHeader = String(decoding: lines[0], as: UTF8.self).replacingOccurrences(
            of: " --timeout-ms", with: "\r--timeout-ms")
        #expect(strayHeader.utf8.count == lines[0].count)
        // (the record, the record line named, what the message says)
        let cases: [([UInt8], Int, String)] = [
            // The first line ends in CR LF, a later one in LF alone.
            (Self.mixed(record, crlf: Set(0..<count).subtracting([3])), 4, "ends in LF alone"),
            (Self.mixed(record, crlf: Set(0..<(count - 1))), count, "ends in LF alone"),
            // The first line ends in LF alone, the end line or a too-long line's in CR LF.
            (Self.mixed(record, crlf: [count - 1]), count, "holds a CR"),
            (Self.mixed(record, crlf: [tooLong]), tooLong + 1, "holds a CR"),
            // A CR inside the header, or inside a table line, with either line end.
            (Array(strayHeader.utf8) + Array(lines[1...].joined()), 1, "holds a CR"),
            (Self.crlf(Array(strayHeader.utf8) + Array(lines[1...].joined())), 1, "holds a CR"),
            (Array((header + table.dropLast() + "\r\n#end 0\n").utf8), 2, "holds a CR"),
            (
                Self.crlf(
                    Array(
                        (header + table.replacingOccurrences(of: ",\"verbs\"", with: ",\r\"verbs\"") + "#end 0\n").utf8)
                ), 2, "holds a CR"
            )
        ]
        let file = dir.appendingPathComponent("bad.in.jsonl")
        for (index, (bytes, line, says)) in cases.enumerated() {
            try Data(bytes).write(to: file)
            let (_, error, status) = try RecordReplayTests.replay(file)
            #expect(
                status == 65 && error.contains("record line \(line) ") && error.contains(says),
                "case \(index): \(status) \(error)")
            let (report, _, checkStatus) = try WorkflowTests.typingd(["check", "--bless", dir.path])
            #expect(
                checkStatus == 1 && report.contains("record line \(line) ") && report.contains(says),
                "case \(index): \(checkStatus) \(report)")
            let blessed = dir.appendingPathComponent("bad.out.jsonl")
            #expect(!FileManager.default.fileExists(atPath: blessed.path), "case \(index) was blessed")
            try? FileManager.default.removeItem(at: blessed)
        }
    }
}
