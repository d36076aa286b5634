import Foundation
import Testing
@_spi(Fuzzing) import TypingProtocol

/// The fuzzer's named regression cases (`fuzz/regressions/`), each checked with the
/// fuzzer's own properties (``LineHandlerFuzz``): a case the fuzzer once found, or
/// one written for a finding, keeps failing here if its bug comes back. (A property
/// that fails traps, as in the fuzzer.)
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
    func replay(_ name: String) throws {
        let data = try Data(contentsOf: Self.folder.appendingPathComponent(name))
        data.withUnsafeBytes { LineHandlerFuzz.check($0) }
    }
}
