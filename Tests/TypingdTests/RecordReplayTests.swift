import Foundation
import Glibc
import Testing

/// Records through the binary, at their limits: a session with many phrase tables of
/// the largest size typingd loads replays byte for byte; a record typingd could not
/// have written, such as one whose times go back, is refused; records of the first
/// version still play.
@Suite("Record and replay")
struct RecordReplayTests {
    /// The most bytes a phrase table file may have (`PhraseTableFile.maxBytes`).
    static let maxTableBytes = 1 << 20

    /// A valid table for `locale` of exactly `size` bytes, written as a person
    /// would (one key a line, ending lines with `newline`), its verb for typing
    /// `tippt-N`, padded with CLDR sample text after `@` in its plural rule (which
    /// rendering never reads, so the table costs nothing to use) made of `unit`.
    static func table(locale: String, number: Int, size: Int, newline: String = "\n", unit: String = "1") -> String {
        func text(_ pad: String) -> String {
            [
                "{",
                #"  "locale": "\#(locale)","#,
                #"  "plural": {"one": "i = 1 and v = 0 @integer 1\#(pad)"},"#,
                #"  "names": {"0+1": "someone", "0+n": "{r} people", "1": "{0}", "1+1": "{0} and one more","#,
                #"            "1+n": "{0} and {r} more", "2": "{0} and {1}", "2+1": "{0}, {1} and one more","#,
                #"            "2+n": "{0}, {1} and {r} more", "3": "{0}, {1} and {2}"},"#,
                #"  "verbs": {"typing": {"one": "tippt-\#(number)", "other": "tippen-\#(number)"},"#,
                #"            "recording_audio": "sprechen", "recording_video": "filmen", "sending_photo": "knipsen","#,
                #"            "sending_video": "senden", "sending_file": "schicken", "sharing_location": "zeigen"},"#,
                #"  "clause": "{names} {verb}","#,
                #"  "separator": "; ","#,
                #"  "end": "…""#,
                "}",
                ""
            ].joined(separator: newline)
        }
        let bare = text("").utf8.count
        return text(String(repeating: unit, count: (size - bare) / unit.utf8.count))
    }

    /// The replay's output, stderr and status.
    static func replay(_ record: URL) throws -> (String, String, Int32) {
        try WorkflowTests.typingd(["replay", record.path])
    }

    @Test("17 tables near the 1 MiB limit: the record replays byte for byte, and check plays it too")
    func manyLargeTables() throws {
        let dir = try Daemon.temporaryFolder("record-tables")
        defer { try? FileManager.default.removeItem(at: dir) }
        let tables = dir.appendingPathComponent("tables")
        try FileManager.default.createDirectory(at: tables, withIntermediateDirectories: true)
        let count = 17
        for number in 1...count {
            // One table with CRLF line ends; one padded with U+2028, which typingd
            // escapes in JSON it writes (6 bytes for 3): its text as typingd would
            // write it back is longer than a table may be.
            let text = Self.table(
                locale: "l\(number)", number: number, size: Self.maxTableBytes - 16 * number,
                newline: number == 2 ? "\r\n" : "\n", unit: number == 3 ? "\u{2028}" : "1")
            #expect(text.utf8.count <= Self.maxTableBytes && text.utf8.count > Self.maxTableBytes - 1024)
            try text.write(
                to: tables.appendingPathComponent(String(format: "%02d.json", number)), atomically: true,
                encoding: .utf8)
        }
        var input = (1...count).map {
            #"{"cmd":"join","conv":"c","user":"u\#($0)","name":"U\#($0)","locale":"l\#($0)"}"#
        }
        input += [
            #"{"cmd":"join","conv":"c","user":"ann","name":"Ann"}"#, #"{"cmd":"type","conv":"c","user":"ann"}"#,
            #"{"cmd":"type","conv":"c","user":"u3"}"#
        ]
        let commands = dir.appendingPathComponent("in.jsonl")
        try (input.joined(separator: "\n") + "\n").write(to: commands, atomically: true, encoding: .utf8)
        let transcripts = dir.appendingPathComponent("transcripts")
        try FileManager.default.createDirectory(at: transcripts, withIntermediateDirectories: true)
        let record = transcripts.appendingPathComponent("session.in.jsonl")

        let (live, liveError, liveStatus) = try WorkflowTests.typingd(
            [
                "--record", record.path, "--phrases", tables.path,
                "--no-drain"
            ], input: commands)
        #expect(liveStatus == 0 && liveError.isEmpty, "\(liveStatus) \(liveError)")
        for number in 1...count where number != 3 {
            #expect(
                live.contains(#""viewer":"u\#(number)","typing":["ann"],"text":"Ann tippt-\#(number)…""#),
                "table \(number) unused: \(live.prefix(2000))")
        }
        // Self-contained: the tables' files are gone.
        try FileManager.default.removeItem(at: tables)
        let (replayed, error, status) = try Self.replay(record)
        #expect(status == 0 && error.isEmpty, "\(status) \(error)")
        #expect(replayed == live, "the replay differs: \(replayed.utf8.count) bytes, live \(live.utf8.count)")
        // Every record line is bounded: no line holds more than one table.
        let bytes = try Data(contentsOf: record)
        let longest = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(\.count).max() ?? 0
        #expect(longest <= Self.maxTableBytes + 64, "a record line of \(longest) bytes")

        let (blessed, _, blessStatus) = try WorkflowTests.typingd(["check", "--bless", transcripts.path])
        #expect(blessStatus == 0, "\(blessed)")
        let expected = try String(contentsOf: transcripts.appendingPathComponent("session.out.jsonl"), encoding: .utf8)
        #expect(expected == live, "check played it otherwise: \(expected.utf8.count) bytes, live \(live.utf8.count)")
    }

    @Test("a hostile record with an absurd first line, or a table line longer than a table may be, is refused (65)")
    func absurdLines() throws {
        let dir = try Daemon.temporaryFolder("record-absurd")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("bad.in.jsonl")
        let options = "#typingd-record v2 --timeout-ms 150"
        let huge = String(repeating: "x", count: 17 << 20)
        try (options + " --style " + huge + "\n#end 0\n").write(to: file, atomically: true, encoding: .utf8)
        let (_, headerError, headerStatus) = try Self.replay(file)
        #expect(
            headerStatus == 65 && headerError.contains("the first line is longer than"),
            "\(headerStatus) \(headerError)")

        let oversized = Self.table(locale: "xx", number: 1, size: Self.maxTableBytes + 100).replacingOccurrences(
            of: "\n", with: " ")
        try (options + "\n#table " + oversized + "\n1\t{\"cmd\":\"stats\"}\n#end 1\n").write(
            to: file, atomically: true, encoding: .utf8)
        let (_, tableError, tableStatus) = try Self.replay(file)
        #expect(tableStatus == 65 && tableError.contains("record line 2"), "\(tableStatus) \(tableError)")

        try (options + "\n#table {\"locale\":\"xx\"}\n#end 1\n").write(to: file, atomically: true, encoding: .utf8)
        let (_, badError, badStatus) = try Self.replay(file)
        #expect(
            badStatus == 65 && badError.contains("record line 2") && badError.contains("names"),
            "\(badStatus) \(badError)")

        try (options + "\n#table {\"locale\":").write(to: file, atomically: true, encoding: .utf8)
        let (_, cutError, cutStatus) = try Self.replay(file)
        #expect(
            cutStatus == 65 && cutError.contains("record line 2") && cutError.contains("cut short"),
            "\(cutStatus) \(cutError)")
    }

    @Test("a header that names a table file, or (in v2) holds a table, is refused: typingd writes neither")
    func headerNamesNoFile() throws {
        let dir = try Daemon.temporaryFolder("record-files")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("bad.in.jsonl")
        let table = dir.appendingPathComponent("de.json")
        try FileManager.default.copyItem(atPath: PhraseOptionsTests.phrases + "/de.json", toPath: table.path)
        for (header, says) in [
            ("#typingd-record v2 --phrases \(table.path)", "--phrases"),
            ("#typingd-record v1 --phrases \(table.path)", "--phrases"),
            ("#typingd-record v2 --phrase-table '{}'", "--phrase-table")
        ] {
            try (header + "\n#end 0\n").write(to: file, atomically: true, encoding: .utf8)
            let (out, error, status) = try Self.replay(file)
            #expect(status == 65 && out.isEmpty && error.contains(says), "\(header): \(status) \(error)")
        }
    }

    @Test("a record of version 1, its tables in the header, still replays")
    func versionOne() throws {
        let dir = try Daemon.temporaryFolder("record-v1")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("old.in.jsonl")
        // As typingd 3.0.0 wrote it, with one table.
        let table =
            #"{"locale":"de","plural":{"one":"i = 1 and v = 0"},"names":{"0+1":"Jemand","0+n":"{r} Personen","1":"{0}","1+1":"{0} und noch jemand","1+n":"{0} und {r} weitere","2":"{0} und {1}","2+1":"{0}, {1} und noch jemand","2+n":"{0}, {1} und {r} weitere","3":"{0}, {1} und {2}"},"verbs":{"typing":{"one":"schreibt","other":"schreiben"},"recording_audio":"spricht","recording_video":"filmt","sending_photo":"sendet ein Foto","sending_video":"sendet ein Video","sending_file":"sendet eine Datei","sharing_location":"teilt den Standort"},"clause":"{names} {verb}","separator":"; ","end":"…"}"#
        let quoted =
            "\"" + table.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            + "\""
        let record = """
            #typingd-record v1 --format json --timeout-ms 150 --style group --list-style compact --default-locale en --audience members --order start --max-listed 100 --max-line-bytes 1048576 --max-members 100000 --max-memberships 10000000 --max-conversations 10000000 --phrase-table \(quoted)
            3\t{"cmd":"join","conv":"c","user":"a","name":"Ann"}
            4\t{"cmd":"join","conv":"c","user":"b","name":"Ben","locale":"de"}
            10\t{"cmd":"type","conv":"c","user":"a"}
            #end 500

            """
        try record.write(to: file, atomically: true, encoding: .utf8)
        let (out, error, status) = try Self.replay(file)
        #expect(status == 0 && error.isEmpty, "\(status) \(error)")
        #expect(
            out == """
                {"event":"indicator","at":10,"conv":"c","viewer":"b","typing":["a"],"text":"Ann schreibt…"}
                {"event":"indicator","at":160,"conv":"c","viewer":"b","typing":[],"text":""}

                """, "\(out)")
    }

    @Test("times that go back are refused by replay and check --bless, naming the record line; equal times play")
    func timesGoBack() throws {
        let dir = try Daemon.temporaryFolder("record-time")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("back.in.jsonl")
        let header = "#typingd-record v1 --timeout-ms 150\n"
        let join = #"{"cmd":"join","conv":"c","user":"a"}"#, type = #"{"cmd":"type","conv":"c","user":"a"}"#
        for (body, line) in [
            ("100\t\(join)\n5000\t\(type)\n50\t\(type)\n60\t\(type)\n#end 70\n", "record line 4"),
            ("100\t\(join)\n200\t\(type)\n#end 199\n", "record line 4")
        ] {
            try (header + body).write(to: file, atomically: true, encoding: .utf8)
            let (_, error, status) = try Self.replay(file)
            #expect(status == 65 && error.contains(line) && error.contains("back"), "\(body): \(status) \(error)")
            let (report, _, checkStatus) = try WorkflowTests.typingd(["check", "--bless", dir.path])
            #expect(checkStatus == 1 && report.contains(line), "\(body): \(checkStatus) \(report)")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("back.out.jsonl").path))
        }
        try (header + "100\t\(join)\n100\t\(type)\n100\t\(type)\n#end 100\n").write(
            to: file, atomically: true, encoding: .utf8)
        let (_, error, status) = try Self.replay(file)
        #expect(status == 0 && error.isEmpty, "\(status) \(error)")
    }
}
