import Foundation
import Testing
import typingd
import TypingProtocol

/// A record that is nothing but its preamble (its header, and its table lines): the
/// record of a session killed before it read a line. `typingd replay` plays it (no
/// output, a note that it has no end line); `typingd check` must play it the same.
@Suite("Records that end with their preamble")
struct RecordPreambleOnlyTests {
    static let header = "#typingd-record v2 --format json --timeout-ms 3000 --clock real\n"
    static let table =
        #"#table {"locale":"de","names":{"0+1":"Jemand","0+n":"{r} Leute","1":"{0}","1+1":"{0} und jemand","1+n":"{0} und {r} weitere","2":"{0} und {1}","2+1":"{0}, {1} und jemand","2+n":"{0}, {1} und {r} weitere","3":"{0}, {1} und {2}"},"verbs":{"typing":"tippt","recording_audio":"a","recording_video":"b","sending_photo":"c","sending_video":"d","sending_file":"e","sharing_location":"f"},"clause":"{names} {verb}","separator":"; ","end":" …"}"#
        + "\n"

    @Test(
        "check plays a record of a header alone, or of a header and table lines, as replay does: no output",
        arguments: [header, header + table, header + table + table])
    func preambleOnly(_ record: String) throws {
        let output = try TranscriptRun.output(of: Array(record.utf8), words: nil, checksInvariants: true)
        #expect(output.isEmpty)
    }

    @Test(
        "a preamble cut short, or with a broken table line, is refused by check as replay refuses it, though no line follows",
        arguments: [
            (header + table.dropLast(), "no line break"), (String(header.dropLast()), "no line break"),
            (header + "#table {\"locale\":\"de\"}\n", "bad phrase table")
        ])
    func brokenPreamble(_ record: String, says: String) throws {
        let file = Daemon.temporaryFile("broken-preamble", suffix: ".rec")
        try record.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let (_, replayed, status) = try WorkflowTests.typingd(["replay", file.path])
        #expect(status == 65 && replayed.contains(says), "\(replayed)")
        do {
            let output = try TranscriptRun.output(of: Array(record.utf8), words: nil, checksInvariants: true)
            Issue.record("check played it: \(output.count) bytes")
        } catch {
            #expect("\(error)".contains(says), "\(error)")
        }
    }

    @Test("a record whose preamble is followed by lines still plays them (the preamble is not played again)")
    func preambleThenLines() throws {
        let record =
            Self.header + Self.table
            + "5\t" + #"{"cmd":"join","conv":"g","user":"a","name":"Ann"}"# + "\n"
            + "5\t" + #"{"cmd":"join","conv":"g","user":"b","name":"Bob","locale":"de"}"# + "\n"
            + "7\t" + #"{"cmd":"type","conv":"g","user":"a"}"# + "\n#end 7\n"
        let output = try TranscriptRun.output(of: Array(record.utf8), words: nil, checksInvariants: true)
        #expect(
            String(decoding: output, as: UTF8.self)
                == #"{"event":"indicator","at":7,"conv":"g","viewer":"b","typing":["a"],"text":"Ann tippt …"}"# + "\n")
    }
}
