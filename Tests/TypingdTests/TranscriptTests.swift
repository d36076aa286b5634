import Foundation
import Testing

/// Runs every golden transcript in `examples/` through the real binary and
/// compares its stdout with `NAME.out.jsonl`, byte for byte.
///
/// `TYPINGD_BLESS=1 swift test --filter TypingdTests` rewrites the golden files
/// from the actual output instead (review the diff before committing them).
@Suite("Golden transcripts")
struct TranscriptTests {
    static let transcripts = Transcript.all()
    static let blessing = ProcessInfo.processInfo.environment["TYPINGD_BLESS"] == "1"

    @Test("examples/ holds the transcripts")
    func found() {
        #expect(Self.transcripts.count >= 12)
    }

    @Test("transcript", arguments: transcripts)
    func transcript(_ transcript: Transcript) throws {
        let run = try Daemon.run(try transcript.arguments(), input: transcript.input)
        let stderr = String(decoding: run.stderr, as: UTF8.self)
        #expect(run.status == 0, "exit status \(run.status); stderr: \(stderr)")
        #expect(stderr.isEmpty, "stderr carries diagnostics only: \(stderr)")

        if Self.blessing {
            try run.stdout.write(to: transcript.expected)
            return
        }
        guard let expected = FileManager.default.contents(atPath: transcript.expected.path) else {
            Issue.record("no \(transcript.name).out.jsonl; create it with TYPINGD_BLESS=1")
            return
        }
        if expected != run.stdout {
            let diff = LineDiff.render(
                expected: String(decoding: expected, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false),
                actual: String(decoding: run.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false))
            Issue.record("""
            \(transcript.name): output differs from \(transcript.name).out.jsonl \
            (TYPINGD_BLESS=1 rewrites it):
            \(diff)
            """)
        }
    }
}
