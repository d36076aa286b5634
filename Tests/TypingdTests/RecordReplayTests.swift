import Foundation
import Glibc
import Testing

/// Records through the binary, at their limits: a session with many phrase tables of
/// the largest size typingd loads replays byte for byte (issue 30, A3); a record
/// typingd could not have written, such as one whose times go back, is refused
/// (A7); records of the first version still play.
@Suite("Record and replay")
struct RecordReplayTests {
    /// The replay's output, stderr and status.
    static func replay(_ record: URL) throws -> (String, String, Int32) {
        try WorkflowTests.typingd(["replay", record.path])
    }

    @Test("times that go back are refused by replay and check --bless, naming the record line; equal times play (A7)")
    func timesGoBack() throws {
        let dir = try WorkflowTests.folder("record-time")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("back.in.jsonl")
        let header = "#typingd-record v1 --timeout-ms 150\n"
        let join = #"{"cmd":"join","conv":"c","user":"a"}"#, type = #"{"cmd":"type","conv":"c","user":"a"}"#
        for (body, line) in [("100\t\(join)\n5000\t\(type)\n50\t\(type)\n60\t\(type)\n#end 70\n", "record line 4"),
                             ("100\t\(join)\n200\t\(type)\n#end 199\n", "record line 4")] {
            try (header + body).write(to: file, atomically: true, encoding: .utf8)
            let (_, error, status) = try Self.replay(file)
            #expect(status == 65 && error.contains(line) && error.contains("back"), "\(body): \(status) \(error)")
            let (report, _, checkStatus) = try WorkflowTests.typingd(["check", "--bless", dir.path])
            #expect(checkStatus == 1 && report.contains(line), "\(body): \(checkStatus) \(report)")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("back.out.jsonl").path))
        }
        try (header + "100\t\(join)\n100\t\(type)\n100\t\(type)\n#end 100\n").write(to: file, atomically: true, encoding: .utf8)
        let (_, error, status) = try Self.replay(file)
        #expect(status == 0 && error.isEmpty, "\(status) \(error)")
    }
}
