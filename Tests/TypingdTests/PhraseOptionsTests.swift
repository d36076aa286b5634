import Foundation
import Glibc
import Testing

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
        let (out, err, status) = try WorkflowTests.typingd(["--clock", "manual", "--phrases", Self.phrases,
                                                            "--default-locale", "zh-Hans-CN"], input: input)
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
            (["--list-style", "tiny"], ["--list-style", "tiny"]),
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

    @Test("a record holds its tables: it replays byte for byte after the table files are gone")
    func recordKeepsTables() throws {
        let dir = try Daemon.temporaryFolder("record-phrases")
        defer { try? FileManager.default.removeItem(at: dir) }
        let tables = dir.appendingPathComponent("tables")
        try FileManager.default.createDirectory(at: tables, withIntermediateDirectories: true)
        for language in ["de", "ru"] {
            try FileManager.default.copyItem(atPath: Self.phrases + "/\(language).json",
                                             toPath: tables.appendingPathComponent("\(language).json").path)
        }
        let record = dir.appendingPathComponent("session.in.jsonl")
        let daemon = try TestProcess.typingd(["--record", record.path, "--phrases", tables.path, "--default-locale", "de",
                                     "--list-style", "group", "--timeout-ms", "200"])
        defer { daemon.stop() }
        try daemon.send(#"{"cmd":"join","conv":"c","user":"ana","name":"Ana","locale":"ru"}"#,
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
        let header = try String(contentsOf: record, encoding: .utf8).prefix { $0 != "\n" }
        #expect(header.contains("--phrase-table") && header.contains("--default-locale de") && header.contains("--list-style group"))
    }
}
