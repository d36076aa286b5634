import Foundation
import Testing
import typingd

/// Runs the examples of Protocol.md and README.md through the real binary, so the
/// documentation shows what typingd really does. `TYPINGD_BLESS=1` rewrites their
/// output blocks from actual runs.
@Suite("Documented examples", .serialized)
struct DocumentTests {
    static let examples = DocumentExample.parse("Protocol.md") + DocumentExample.parse("README.md")

    @Test("the documents have examples")
    func found() {
        #expect(DocumentExample.parse("Protocol.md").count >= 8)
        #expect(DocumentExample.parse("README.md").count >= 1)
    }

    @Test("documented example", arguments: examples)
    func example(_ example: DocumentExample) throws {
        let input = Daemon.temporaryFile("doc-\(example.line)", suffix: ".jsonl")
        try (example.input.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: input) }
        let run = try TestProcess.run(example.arguments, stdin: .file(input), directory: DocumentExample.root)
        #expect(run.status == 0, "\(example): exit status \(run.status)")
        let actual = String(decoding: run.stdout, as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        if TranscriptTests.blessing {
            try example.bless(actual)
            return
        }
        if actual != example.output {
            Issue.record(
                """
                \(example): the documented output differs from a real run (TYPINGD_BLESS=1 rewrites it):
                \(OutputDiff.describe(expected: Array((example.output.joined(separator: "\n") + "\n").utf8),
                                  actual: Array((actual.joined(separator: "\n") + "\n").utf8)) ?? "")
                """)
        }
    }
}
