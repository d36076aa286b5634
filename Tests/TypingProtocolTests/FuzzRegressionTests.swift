import Foundation
import Testing
import TypingFuzzSupport

/// The fuzzer's named regression cases (`fuzz/regressions/`), each checked with the
/// fuzzer's own properties (``LineHandlerFuzz``): a case the fuzzer once found, or
/// one written for a finding, keeps failing here if its bug comes back. A property
/// that fails traps, as in the fuzzer, and so may the bug itself: each case runs in
/// a child process (an exit test), so that it fails as one test case, named by its
/// file, instead of ending the whole run.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../fuzz/regressions").standardizedFileURL

    static let cases: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { !$0.hasPrefix(".") }.sorted()

    @Test("fuzz/regressions holds the named cases")
    func found() {
        #expect(Self.cases.count >= 5)
    }

    @Test("each named case holds every property", arguments: cases)
    func replay(_ name: String) async throws {
        let path = Self.folder.appendingPathComponent(name).path
        // What the child writes on stderr (the message of a failed property, a crash's
        // report) goes to a file: the expectation returns nothing when it fails.
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-\(name)-\(UUID().uuidString).log")
            .path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = await #expect(processExitsWith: .success, "fuzz/regressions/\(name) fails a property, or crashes")
        {
            [path = path as String, log = log as String] in
            let fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            if fd >= 0 { dup2(fd, STDERR_FILENO) }
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            _ = bytes.withUnsafeBytes { LineHandlerFuzz.check($0) }
        }
        if result == nil {
            let stderr = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            Issue.record("fuzz/regressions/\(name): its stderr:\n\(stderr.prefix(3000))")
        }
    }

    @Test("an input shorter than the three option bytes is run, as input", arguments: ["", "{", "{\n", "[]"])
    func shortInputsRun(_ input: String) {
        let output = Array(input.utf8).withUnsafeBytes { LineHandlerFuzz.check($0) }
        let expected = input.isEmpty ? "" : #"{"event":"error","line":1,"code":"#
        #expect(
            String(decoding: output, as: UTF8.self).hasPrefix(expected), "\(String(decoding: output, as: UTF8.self))")
        #expect(input.isEmpty == output.isEmpty)
    }
}
