import Foundation
import Testing
import typingd
import TypingProtocol

/// The golden transcripts in `examples/transcripts`, checked by the code of
/// `typingd check` (what the project trusts, and what users run), with the engine's
/// invariants checked after every line; and by the daemon itself, as a process.
///
/// `TYPINGD_BLESS=1 swift test --filter TypingdTests` rewrites the expected files
/// from the actual output instead (review the diff before committing them); so does
/// `typingd check --bless examples/transcripts`.
@Suite("Golden transcripts")
struct TranscriptTests {
    static let folder = DocumentExample.root.appendingPathComponent("examples/transcripts").path
    static let transcripts = (try? Transcript.find(in: [folder])) ?? []
    static let blessing = ProcessInfo.processInfo.environment["TYPINGD_BLESS"] == "1"

    @Test("examples/transcripts holds the transcripts")
    func found() {
        #expect(Self.transcripts.count >= 37)
    }

    @Test("transcript, in process (typingd check)", arguments: transcripts)
    func transcript(_ transcript: Transcript) {
        var printed: [String] = []
        let failure = TranscriptCheck(bless: Self.blessing, checksInvariants: true).check(transcript) {
            printed.append($0)
        }
        #expect(failure == nil, "\(printed.joined(separator: "\n"))")
    }

    @Test(
        "transcript, through the daemon process: one thread, and parsing on four threads with tiny reads",
        arguments: transcripts)
    func daemon(_ transcript: Transcript) throws {
        guard !Self.blessing else { return }
        var arguments = try ArgumentWords.split(
            FileManager.default.fileExists(atPath: transcript.arguments)
                ? String(contentsOfFile: transcript.arguments, encoding: .utf8) : "")
        if !arguments.contains("--clock") { arguments = ["--clock", "manual"] + arguments }
        let expected = try [UInt8](Data(contentsOf: URL(fileURLWithPath: transcript.expected)))
        // Tiny reads make every read a flood: lines go through the parsing threads
        // in small batches, and lines are cut across reads everywhere.
        for threading in [
            ["--threads", "1"], ["--threads", "4", "--read-buffer", "7"], ["--threads", "2", "--read-buffer", "300"]
        ] {
            // In the transcript's folder: relative --phrases paths are from there, as
            // typingd check takes them.
            let run = try TestProcess.run(
                arguments + threading, stdin: .file(URL(fileURLWithPath: transcript.input)),
                directory: URL(fileURLWithPath: transcript.input).deletingLastPathComponent())
            #expect(
                run.status == 0 && run.stderr.isEmpty,
                "\(threading) status \(run.status): \(String(decoding: run.stderr, as: UTF8.self))")
            let difference = OutputDiff.describe(expected: expected, actual: [UInt8](run.stdout))
            #expect(difference == nil, "\(transcript) with \(threading): \(difference ?? "")")
        }
    }
}
