import Foundation
import Testing
import TypingTestSupport
import typingd

/// `typingd check`'s report of what differs: it must name the lines that differ and
/// no others, however large the differing region.
@Suite("check's difference report")
struct OutputDiffTests {
    static func bytes(_ lines: [String]) -> [UInt8] {
        Array(lines.map { $0 + "\n" }.joined().utf8)
    }

    /// Lines with distinct content, like a transcript's events.
    static func events(_ range: Range<Int>) -> [String] {
        range.map { #"{"event":"indicator","conv":"c\#($0)","viewer":"v","text":""}"# }
    }

    @Test("one line inserted early in a long region is one added line, not thousands changed")
    func insertionInLargeRegion() {
        // The region between the equal first and last lines is 5,000 × 5,001 lines:
        // over the size where a quadratic table was given up for pairing by position.
        var expected = ["first"] + Self.events(0..<5_000) + ["last"]
        var actual = expected
        actual.insert(#"{"event":"error","code":"bad_json"}"#, at: 2)
        #expect(OutputDiff.summary(expected: Self.bytes(expected), actual: Self.bytes(actual)) == "1 line added")
        let report = OutputDiff.describe(expected: Self.bytes(expected), actual: Self.bytes(actual)) ?? ""
        #expect(report == #"  extra line after expected line 2: {"event":"error","code":"bad_json"}"#, "\(report)")
        expected[4_000] = #"{"event":"stats"}"#
        #expect(
            OutputDiff.summary(expected: Self.bytes(expected), actual: Self.bytes(actual)) == "1 line changed, 1 added")
    }

    @Test("past the edit limit, lines pair by position and an equal pair is never reported")
    func beyondTheLimit() {
        let expected = Self.events(0..<6_000)
        var actual = expected
        for index in stride(from: 0, to: 6_000, by: 2) { // 3,000 changed: 6,000 edits
            actual[index] = actual[index].replacingOccurrences(of: #""text":"""#, with: #""text":"Ana is typing...""#)
        }
        let report = OutputDiff.describe(expected: Self.bytes(expected), actual: Self.bytes(actual)) ?? ""
        #expect(report.contains("\n" + #"  line 1: key "text": expected "", got "Ana is typing...""#), "\(report)")
        #expect(
            report.contains("  line 1: ") && report.contains("  line 3: ") && !report.contains("  line 2: "),
            "\(report)")
        #expect(
            OutputDiff.summary(expected: Self.bytes(expected), actual: Self.bytes(actual))
                == "3000 lines changed (compared by position: over 1000 lines removed and added)")
    }

    @Test(
        "the edits found are a shortest script: as many kept lines as a longest common subsequence",
        arguments: 0..<40)
    func shortest(seed: Int) throws {
        var generator = SplitMix64(seed: UInt64(seed))
        let alphabet = ["a", "b", "c", "d"]
        let old = (0..<Int(generator.next() % 30)).map { _ in alphabet[Int(generator.next() % 4)] }
        let new = (0..<Int(generator.next() % 30)).map { _ in alphabet[Int(generator.next() % 4)] }
        let oldLines = old.map { ArraySlice($0.utf8) }, newLines = new.map { ArraySlice($0.utf8) }
        let edits = try #require(OutputDiff.shortestEdits(oldLines, newLines))
        // Applying the script to old gives new.
        var x = 0, y = 0, kept = 0
        for edit in edits {
            switch edit {
            case .keep:
                #expect(old[x] == new[y])
                x += 1; y += 1; kept += 1
            case .remove: x += 1
            case .add: y += 1
            }
        }
        #expect(x == old.count && y == new.count)
        #expect(kept == Self.lcs(old, new), "\(old) → \(new)")
        // And the report pairs only lines that differ.
        for change in OutputDiff.alignment(oldLines, newLines).changes {
            if case let .changed(i, j) = change { #expect(old[i] != new[j]) }
        }
    }

    @Test("bytes that are not UTF-8 are shown as \\xNN, so two lines that differ there do not print alike")
    func invalidBytes() {
        #expect(
            OutputDiff.show(ArraySlice(Array("a".utf8) + [0xFF] + Array("é".utf8) + [0xC3]))
                == "a\\xFFé\\xC3")
        #expect(OutputDiff.show(ArraySlice("a\u{FFFD}".utf8)) == "a\u{FFFD}")
        let long = ArraySlice(Array(repeating: UInt8(ascii: "z"), count: 5_000))
        #expect(OutputDiff.show(long) == String(repeating: "z", count: 300) + " …")
    }

    @Test("an empty file is not said to lack a final line break")
    func emptySide() {
        let report = OutputDiff.describe(expected: [], actual: Array("a\nb\n".utf8)) ?? ""
        #expect(!report.contains("line break"), "\(report)")
        let other = OutputDiff.describe(expected: Array("a\nb\n".utf8), actual: []) ?? ""
        #expect(!other.contains("line break") && other.contains("line 1 is missing"), "\(other)")
    }

    @Test(
        "the command that shows every difference: quoted, --phrases from the transcript's folder, no command where it would mislead"
    )
    func seeAll() {
        let typingd = Transcript.shellQuoted(CommandLine.arguments.first ?? "typingd")
        let t = Transcript(stem: "t/sub/it's here")
        #expect(
            t.seeAll(words: ["--phrases", "../p", "--phrases=/abs", "--phrases=x y"], recorded: false)
                == typingd
                + #" --clock manual --phrases t/sub/../p --phrases=/abs '--phrases=t/sub/x y' < 't/sub/it'\''s here.in.jsonl' | diff 't/sub/it'\''s here.out.jsonl' -"#
        )
        #expect(
            Transcript(stem: "-x").seeAll(words: nil, recorded: true) == typingd
                + " replay ./-x.in.jsonl | diff ./-x.out.jsonl -")
        #expect(
            Transcript(stem: "-x").seeAll(words: nil, recorded: false) == typingd
                + " --clock manual < -x.in.jsonl | diff ./-x.out.jsonl -")
        #expect(t.seeAll(words: ["--clock", "real"], recorded: false) == nil)
        #expect(t.seeAll(words: ["--clock=real"], recorded: false) == nil)
        #expect(Transcript(stem: "esc\u{1B}[31m").seeAll(words: nil, recorded: false) == nil)
        #expect(t.seeAll(words: ["--phrases", "a\u{202E}b"], recorded: false) == nil)
    }

    @Test("past the edit limit the report says lines are compared by position; one more difference is singular")
    func byPosition() {
        var expected = Self.events(0..<3_000)
        var actual = expected
        actual.insert("inserted", at: 0)
        for index in stride(from: 1, to: 3_001, by: 2) { actual[index] += " " }
        let report = OutputDiff.describe(expected: Self.bytes(expected), actual: Self.bytes(actual)) ?? ""
        #expect(report.hasPrefix("  (over 1000 lines removed and added: lines are compared by position"), "\(report)")
        #expect(report.contains(" in all by position"), "\(report)")
        #expect(
            OutputDiff.summary(expected: Self.bytes(expected), actual: Self.bytes(actual)).hasSuffix(
                "(compared by position: over 1000 lines removed and added)"))
        expected = Self.events(0..<21)
        actual = expected.map { $0 + " " }
        let one = OutputDiff.describe(expected: Self.bytes(expected), actual: Self.bytes(actual)) ?? ""
        #expect(one.hasSuffix("  … and 1 more difference: 21 lines changed in all"), "\(one)")
    }

    @Test("the JUnit report keeps a CR as a character reference, which an XML parser does not fold into LF")
    func junitCarriageReturn() {
        #expect(JUnitReport.escape("a\r\nb<\u{1B}") == "a&#13;\nb&lt;\\u{1b}")
    }

    static func lcs(_ a: [String], _ b: [String]) -> Int {
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                table[i][j] = a[i] == b[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
            }
        }
        return table[0][0]
    }
}
