import Foundation
import Glibc
import Testing
import TypingCore
import TypingProtocol

/// `--phrases`, `--default-locale` and `--list-style` through the binary: the
/// shipped tables load from their folder, a bad table or tag stops typingd before
/// it reads any input (exit 64, the file and the key named), and a record keeps its
/// tables, so it replays the same after their files are gone.
@Suite("Phrase options")
struct PhraseOptionsTests {
    static let phrases = DocumentExample.root.appendingPathComponent("phrases").path

    static let room = """
        {"cmd":"join","conv":"c","user":"ana","name":"Ana","locale":"ru"}
        {"cmd":"join","conv":"c","user":"ben","name":"Ben","locale":"ja"}
        {"cmd":"join","conv":"c","user":"cy","name":"Cy"}
        {"cmd":"type","conv":"c","user":"cy","at":5}

        """

    @Test("--phrases with the shipped folder loads every table; users get theirs, others the default locale's")
    func shippedFolder() throws {
        let dir = try Daemon.temporaryFolder("phrases")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.jsonl")
        try Self.room.write(to: input, atomically: true, encoding: .utf8)
        let (out, err, status) = try WorkflowTests.typingd(
            [
                "--clock", "manual", "--phrases", Self.phrases,
                "--default-locale", "zh-Hans-CN"
            ], input: input)
        #expect(status == 0 && err.isEmpty, "\(err)")
        #expect(out.contains(#""viewer":"ana","typing":["cy"],"text":"Cy печатает…""#), "\(out)")
        #expect(out.contains(#""viewer":"ben","typing":["cy"],"text":"Cyが入力中…""#), "\(out)")
    }

    @Test("a bad table, a missing file or a bad tag: exit 64 before any input, naming the file and the key")
    func refused() throws {
        let dir = try Daemon.temporaryFolder("bad-phrases")
        defer { try? FileManager.default.removeItem(at: dir) }
        let table = dir.appendingPathComponent("xx.json")
        var text = try String(contentsOfFile: Self.phrases + "/de.json", encoding: .utf8)
        text = text.replacingOccurrences(of: #""2+n": "{0}, {1} und {r} weitere""#, with: #""2+n": "{0}, {1}, {2}""#)
        try text.write(to: table, atomically: true, encoding: .utf8)
        // Input that would write something if it were read.
        let input = dir.appendingPathComponent("in.jsonl")
        try "{\"cmd\":\"stats\"}\n".write(to: input, atomically: true, encoding: .utf8)
        let notJSON = dir.appendingPathComponent("notes.txt")
        try "- names\n".write(to: notJSON, atomically: true, encoding: .utf8)
        let emptyKey = dir.appendingPathComponent("empty-key.txt")
        try "{\"\":1}\n".write(to: emptyKey, atomically: true, encoding: .utf8)
        for (options, says) in [
            (["--phrases", table.path], ["xx.json", "names.2+n", "{2}"]),
            (["--phrases", dir.path], ["xx.json", "names.2+n"]),
            (["--phrases", dir.appendingPathComponent("none.json").path], ["none.json", "No such file"]),
            (["--phrases", "/dev/zero"], ["/dev/zero", "not a regular file"]),
            (["--phrases", notJSON.path], ["--phrases \(notJSON.path): line 1: invalid JSON"]),
            (["--phrases", emptyKey.path], ["--phrases \(emptyKey.path): \"\": is not a key of a table"]),
            (["--default-locale", "de_DE"], ["--default-locale", "de_DE"]),
            (["--list-style", "tiny"], ["--list-style", "tiny"])
        ] {
            let (out, err, status) = try WorkflowTests.typingd(["--clock", "manual"] + options, input: input)
            #expect(status == 64 && out.isEmpty, "\(options): \(status) \(out)")
            for word in says { #expect(err.contains(word), "\(options): \(err)") }
        }
    }

    @Test("a table named and made of terminal controls: the message on stderr escapes them")
    func controlsInMessages() throws {
        let dir = try Daemon.temporaryFolder("evil-phrases")
        defer { try? FileManager.default.removeItem(at: dir) }
        let table = dir.appendingPathComponent("a\u{1B}[31mred\u{9B}.json")
        try "{\"locale\":\"de\"\u{1B}[2J}".write(to: table, atomically: true, encoding: .utf8)
        let input = dir.appendingPathComponent("in.jsonl")
        try "{\"cmd\":\"stats\"}\n".write(to: input, atomically: true, encoding: .utf8)
        let (out, err, status) = try WorkflowTests.typingd(["--clock", "manual", "--phrases", dir.path], input: input)
        #expect(status == 64 && out.isEmpty, "\(status) \(out)")
        #expect(err.contains("a\\u{1b}[31mred\\u{9b}.json"), "\(err)")
        #expect(!err.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{9B}" }, "\(err)")
    }

    /// Writes `text` to the file named by the raw bytes `name` in `folder` (a name
    /// Foundation cannot spell: not UTF-8).
    static func writeRaw(_ folder: URL, _ name: [UInt8], _ text: String) throws {
        let path = (Array(folder.path.utf8) + [UInt8(ascii: "/")] + name + [0]).map { CChar(bitPattern: $0) }
        let fd = path.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { open($0, O_WRONLY | O_CREAT | O_TRUNC, 0o644) } ?? -1
        }
        try #require(fd >= 0, "cannot create \(name): \(errno)")
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        try #require(written == bytes.count)
    }

    @Test("a table whose file name is not UTF-8 loads, opened by its bytes; a broken one is named escaped")
    func nonUTF8Names() throws {
        let dir = try Daemon.temporaryFolder("nonutf-phrases")
        defer { try? FileManager.default.removeItem(at: dir) }
        let german = try String(contentsOfFile: Self.phrases + "/de.json", encoding: .utf8)
        try Self.writeRaw(dir, [UInt8(ascii: "d"), 0xFF] + Array(".json".utf8), german)
        let input = dir.appendingPathComponent("in.jsonl")
        try """
        {"cmd":"join","conv":"c","user":"ana","name":"Ana","locale":"de"}
        {"cmd":"join","conv":"c","user":"ben","name":"Ben"}
        {"cmd":"type","conv":"c","user":"ben","at":5}

        """.write(to: input, atomically: true, encoding: .utf8)
        let (out, err, status) = try WorkflowTests.typingd(["--clock", "manual", "--phrases", dir.path], input: input)
        #expect(status == 0 && err.isEmpty, "\(status) \(err)")
        #expect(out.contains(#""viewer":"ana","typing":["ben"],"text":"Ben schreibt…""#), "\(out)")
        // Broken, under a name with 0xFF and an ESC: named, escaped, on one line.
        try Self.writeRaw(dir, [0xFF, 0x1B] + Array("x.json".utf8), "{\"locale\":\"xx\"")
        let (brokenOut, broken, brokenStatus) = try WorkflowTests.typingd(
            ["--clock", "manual", "--phrases", dir.path], input: input)
        #expect(brokenStatus == 64 && brokenOut.isEmpty, "\(brokenStatus)")
        #expect(broken.contains("--phrases \(dir.path)/\\xFF\\u{1b}x.json: line 1: "), "\(broken)")
        #expect(!broken.contains("\u{FFFD}") && !broken.contains("\u{1B}"), "\(broken)")
    }

    @Test("a broken table named with a line break is refused, its name escaped on one stderr line")
    func lineBreakInName() throws {
        let dir = try Daemon.temporaryFolder("newline-phrases")
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.writeRaw(dir, Array("a\ntypingd: all good\r.json".utf8), "{\"locale\":\"xx\"}")
        let input = dir.appendingPathComponent("in.jsonl")
        try "{\"cmd\":\"stats\"}\n".write(to: input, atomically: true, encoding: .utf8)
        let (out, err, status) = try WorkflowTests.typingd(["--clock", "manual", "--phrases", dir.path], input: input)
        #expect(status == 64 && out.isEmpty, "\(status) \(out)")
        #expect(err.contains("--phrases \(dir.path)/a\\u{a}typingd: all good\\u{d}.json: names: is missing"), "\(err)")
        #expect(
            err.hasSuffix("\n") && err.dropLast().split(separator: "\n", omittingEmptySubsequences: false).count == 1,
            "\(err)")
        // So is a missing --phrases path given with one.
        let (_, missing, missingStatus) = try WorkflowTests.typingd(
            ["--clock", "manual", "--phrases", dir.path + "/no\nsuch.json"], input: input)
        #expect(missingStatus == 64 && missing.contains("no\\u{a}such.json: No such file"), "\(missing)")
        #expect(missing.dropLast().split(separator: "\n", omittingEmptySubsequences: false).count == 1, "\(missing)")
    }

    @Test("an unknown option or a bad value holding ESC: ArgumentParser's message on stderr escapes it too")
    func controlsInArguments() throws {
        let dir = try Daemon.temporaryFolder("evil-arguments")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.jsonl")
        try "{\"cmd\":\"stats\"}\n".write(to: input, atomically: true, encoding: .utf8)
        for options in [["--bogus\u{1B}[31mRED"], ["--timeout-ms", "5\u{1B}[2J"], ["check", "--x\u{9B}1"]] {
            let (out, err, status) = try WorkflowTests.typingd(options, input: input)
            #expect(status == 64 && out.isEmpty, "\(options): \(status) \(out)")
            #expect(err.contains("\\u{1b}") || err.contains("\\u{9b}"), "\(options): \(err)")
            #expect(!err.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{9B}" }, "\(options): \(err)")
        }
    }

    @Test("an option value or name holding a line break: escaped, so it forges no line of its own on stderr")
    func lineBreaksInArguments() throws {
        let dir = try Daemon.temporaryFolder("line-break-arguments")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.jsonl")
        try "{\"cmd\":\"stats\"}\n".write(to: input, atomically: true, encoding: .utf8)
        for options in [
            ["--timeout-ms", "1\ntypingd: forged"], ["--timeout-ms=1\ntypingd: forged"],
            ["--style", "x\ntypingd: forged"], ["--bogus\ntypingd: forged"]
        ] {
            let (out, err, status) = try WorkflowTests.typingd(options, input: input)
            #expect(status == 64 && out.isEmpty, "\(options): \(status) \(out)")
            #expect(err.contains("\\u{a}typingd: forged"), "\(options): \(err)")
            #expect(!err.split(separator: "\n").contains { $0.hasPrefix("typingd: forged") }, "\(options): \(err)")
        }
    }

    /// Built-in English as a table file, with `clause` and subject `1` replaced.
    static func english(clause: String, one: String = "{0}") -> String {
        let text = String(decoding: PhraseTableFile.encode(PhraseTable.english), as: UTF8.self)
            .replacingOccurrences(of: #""locale":"en""#, with: #""locale":"xx""#)
            .replacingOccurrences(of: #""1":"{0}""#, with: "\"1\":\"\(one)\"")
            .replacingOccurrences(of: #""clause":"{names} {verb}""#, with: "\"clause\":\"\(clause)\"")
        return text
    }

    @Test("a table whose phrase could take ~10^15 bytes is refused at start, exit 64, naming file and key")
    func quadraticTable() throws {
        let dir = try Daemon.temporaryFolder("quadratic-phrases")
        defer { try? FileManager.default.removeItem(at: dir) }
        let table = dir.appendingPathComponent("huge.json")
        let text = Self.english(
            clause: String(repeating: "{names}", count: 70_000) + "{verb}",
            one: String(repeating: "{0}", count: 100_000))
        #expect(text.utf8.count > 790_000 && text.utf8.count < PhraseTableFile.maxBytes, "\(text.utf8.count)")
        try text.write(to: table, atomically: true, encoding: .utf8)
        // Not a join, join, type that would render it: a typingd without the bound would
        // try to build 35 GB. Input that writes a line if it is read is enough to tell.
        let input = dir.appendingPathComponent("in.jsonl")
        try "{\"cmd\":\"stats\"}\n".write(to: input, atomically: true, encoding: .utf8)
        let (out, err, status) = try WorkflowTests.typingd(["--clock", "manual", "--phrases", dir.path], input: input)
        #expect(status == 64 && out.isEmpty, "\(status) \(out)")
        #expect(err.contains("--phrases \(table.path): names.1: one phrase could take"), "\(err)")
        #expect(err.contains("at most \(PhraseTable.maxPhraseBytes)"), "\(err)")
        #expect(err.split(separator: "\n").count == 1, "\(err)")
    }

    @Test("a table just under the bound on one phrase loads and renders; a byte more per clause is refused")
    func justUnderTheBound() throws {
        let dir = try Daemon.temporaryFolder("bound-phrases")
        defer { try? FileManager.default.removeItem(at: dir) }
        let pad = (PhraseTable.maxPhraseBytes - PhraseTable.english.phraseBound) / Activity.phrased.count
        let under = dir.appendingPathComponent("under.json"), over = dir.appendingPathComponent("over.json")
        try Self.english(clause: "{names} {verb}" + String(repeating: "~", count: pad)).write(
            to: under, atomically: true, encoding: .utf8)
        try Self.english(clause: "{names} {verb}" + String(repeating: "~", count: pad + 1)).write(
            to: over, atomically: true, encoding: .utf8)
        let input = dir.appendingPathComponent("in.jsonl")
        try """
        {"cmd":"join","conv":"c","user":"ana","name":"Ana","locale":"xx"}
        {"cmd":"join","conv":"c","user":"ben","name":"Ben"}
        {"cmd":"type","conv":"c","user":"ben","at":5}

        """.write(to: input, atomically: true, encoding: .utf8)
        let (out, err, status) = try WorkflowTests.typingd(["--clock", "manual", "--phrases", under.path], input: input)
        #expect(status == 0 && err.isEmpty, "\(status) \(err)")
        #expect(
            out.contains("\"text\":\"Ben is typing\(String(repeating: "~", count: pad))...\""), "\(out.prefix(300))")
        let (refusedOut, refused, refusedStatus) = try WorkflowTests.typingd(
            ["--clock", "manual", "--phrases", over.path], input: input)
        #expect(refusedStatus == 64 && refusedOut.isEmpty, "\(refusedStatus)")
        #expect(
            refused.contains(
                "--phrases \(over.path): clause: one phrase could take \(PhraseTable.english.phraseBound + 7 * (pad + 1)) bytes"
            ), "\(refused)")
    }

    @Test("a record holds its tables: it replays byte for byte after the table files are gone")
    func recordKeepsTables() throws {
        let dir = try Daemon.temporaryFolder("record-phrases")
        defer { try? FileManager.default.removeItem(at: dir) }
        let tables = dir.appendingPathComponent("tables")
        try FileManager.default.createDirectory(at: tables, withIntermediateDirectories: true)
        for language in ["de", "ru"] {
            try FileManager.default.copyItem(
                atPath: Self.phrases + "/\(language).json",
                toPath: tables.appendingPathComponent("\(language).json").path)
        }
        let record = dir.appendingPathComponent("session.in.jsonl")
        let daemon = try TestProcess.typingd([
            "--record", record.path, "--phrases", tables.path, "--default-locale", "de",
            "--list-style", "group", "--timeout-ms", "200"
        ])
        defer { daemon.stop() }
        try daemon.send(
            #"{"cmd":"join","conv":"c","user":"ana","name":"Ana","locale":"ru"}"#,
            #"{"cmd":"join","conv":"c","user":"ben","name":"Ben"}"#,
            #"{"cmd":"join","conv":"c","user":"cy","name":"Cy"}"#,
            #"{"cmd":"open","conv":"c","user":"cy","view":"list"}"#,
            #"{"cmd":"type","conv":"c","user":"ben","activity":"recording_audio"}"#)
        try daemon.closeInput()
        let live = try daemon.readAll().joined(separator: "\n") + "\n"
        #expect(try daemon.waitForExit() == 0)
        #expect(live.contains("Ben записывает голосовое сообщение") || live.contains("Ben записывает"), "\(live)")
        #expect(live.contains("Ben nimmt eine Sprachnachricht auf"), "\(live)")
        try FileManager.default.removeItem(at: tables)
        let (replayed, err, status) = try WorkflowTests.typingd(["replay", record.path])
        #expect(status == 0 && err.isEmpty, "\(err)")
        #expect(replayed == live)
        let lines = try String(contentsOf: record, encoding: .utf8).split(separator: "\n")
        #expect(
            lines[0].hasPrefix("#typingd-record v2 ") && !lines[0].contains("--phrase")
                && lines[0].contains("--default-locale de") && lines[0].contains("--list-style group"), "\(lines[0])")
        // A line per table, in the order loaded: the file's text, its line breaks made spaces.
        #expect(
            lines[1].hasPrefix("#table {   \"locale\": \"de\",")
                && lines[2].hasPrefix("#table {   \"locale\": \"ru\","),
            "\(lines[1].prefix(40)) \(lines[2].prefix(40))")
    }
}
