import Foundation
import Testing

/// What `--help` (and so the manual pages) says against what the binary does, and
/// the README and Protocol.md against `--help`.
@Suite("Help says what typingd does")
struct HelpTests {
    /// The "Exit status: …" paragraph of `typingd ARGUMENTS --help`, as clauses:
    /// `64 when there is nothing to check (…)` → (64, "when there is nothing …").
    static func exitStatuses(_ arguments: [String]) throws -> [(status: Int32, text: String)] {
        let (out, _, status) = try WorkflowTests.typingd(arguments + ["--help"])
        #expect(status == 0)
        let paragraph = try #require(
            out.split(separator: "\n\n").first { $0.hasPrefix("Exit status: ") },
            "typingd \(arguments.joined(separator: " ")) --help states no exit status")
        let text = paragraph.dropFirst("Exit status: ".count).split(whereSeparator: \.isWhitespace).joined(
            separator: " ")
        return text.split(separator: "; ").compactMap { clause in
            // "128 + N when stopped by signal N": CheckFilesTests sends the signals.
            guard !clause.contains(" + N "), let number = Int32(clause.prefix { $0.isNumber }) else { return nil }
            return (number, String(clause))
        }
    }

    /// The status `statuses` give for the clause that says `words`.
    static func status(_ statuses: [(status: Int32, text: String)], saying words: String) throws -> Int32 {
        try #require(statuses.first { $0.text.contains(words) }, "no exit status says \"\(words)\": \(statuses)").status
    }

    @Test(
        "typingd check exits with the status its --help states: passed, failed, could not run, a missing path, not a transcript, an empty folder, a bad option, an unwritable --junit file"
    )
    func checkStatuses() throws {
        let statuses = try Self.exitStatuses(["check"])
        let dir = try CheckFilesTests.folderWithTranscript("statuses")
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = dir.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let failing = dir.appendingPathComponent("failing")
        try FileManager.default.createDirectory(at: failing, withIntermediateDirectories: true)
        try #"{"cmd":"stats"}"#.appending("\n").write(
            to: failing.appendingPathComponent("y.in.jsonl"), atomically: true, encoding: .utf8)
        try "not this\n".write(to: failing.appendingPathComponent("y.out.jsonl"), atomically: true, encoding: .utf8)
        let broken = dir.appendingPathComponent("broken")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try "".write(to: broken.appendingPathComponent("z.in.jsonl"), atomically: true, encoding: .utf8)
        try "--bogus\n".write(to: broken.appendingPathComponent("z.args"), atomically: true, encoding: .utf8)
        let other = dir.appendingPathComponent("notes.txt")
        try "".write(to: other, atomically: true, encoding: .utf8)
        let passing = dir.appendingPathComponent("x.in.jsonl").path
        let cases: [(words: String, arguments: [String])] = [
            ("every transcript passed", ["check", passing]),
            ("when one failed", ["check", failing.path]),
            ("could not run (a bad NAME.args", ["check", broken.path]),
            ("a path that does not exist", ["check", dir.appendingPathComponent("missing").path]),
            ("is neither a folder nor a NAME.in.jsonl", ["check", other.path]),
            ("holds no transcript", ["check", empty.path]),
            ("for a bad option", ["check", "--bogus", passing]),
            (
                "the --junit file cannot be written",
                ["check", passing, "--junit", dir.appendingPathComponent("no/such/folder/report.xml").path]
            )
        ]
        for (words, arguments) in cases {
            let expected = try Self.status(statuses, saying: words)
            let (out, error, status) = try WorkflowTests.typingd(arguments)
            #expect(
                status == expected,
                "\(words): typingd \(arguments.joined(separator: " ")) exited \(status), --help says \(expected)\n\(out)\(error)"
            )
        }
        // 74 (typingd cannot watch for signals: signalfd or the like failed) cannot be
        // caused from here.
        #expect(
            Set(statuses.map(\.status)) == [0, 1, 64, 74],
            "a status --help states that no case here checks: \(statuses)")
    }

    @Test(
        "a session option given to check or replay, before or after it, is exit 64 naming it, not silently ignored; their own options still work"
    )
    func sessionOptionsRefusedBySubcommands() throws {
        let dir = try CheckFilesTests.folderWithTranscript("session-options")
        defer { try? FileManager.default.removeItem(at: dir) }
        for (words, named) in [
            (["replay", "x.rec", "--format", "text"], "--format"),
            (["--format", "text", "replay", "x.rec"], "--format"),
            (["replay", "--quiet-above=3", "x.rec"], "--quiet-above"),
            (["check", "--announce-after-ms", "5", dir.path], "--announce-after-ms"),
            (["check", dir.path, "--threads", "3"], "--threads"),
            (["--record", "r.rec", "check", dir.path], "--record")
        ] {
            let (out, err, status) = try WorkflowTests.typingd(words)
            #expect(status == 64 && out.isEmpty, "\(words): \(status) \(out)")
            #expect(err.contains("\(named) is a session option"), "\(words): \(err)")
        }
        let (_, _, status) = try WorkflowTests.typingd(["check", "--bless", dir.path])
        #expect(status == 0, "check --bless: \(status)")
    }

    @Test("a mistyped subcommand gets a suggestion (exit 64); a word far from every name gets none")
    func subcommandSuggestion() throws {
        for (words, suggestion) in [
            (["chek", "examples"], "typingd check"), (["replya", "x.rec"], "typingd replay"),
            (["hlep"], "typingd help"), (["zzz"], nil)
        ] as [([String], String?)] {
            let (out, err, status) = try WorkflowTests.typingd(words)
            let first = err.split(separator: "\n").first.map(String.init) ?? ""
            #expect(status == 64 && out.isEmpty, "\(words): \(status)")
            if let suggestion {
                #expect(first.hasSuffix(". Did you mean '\(suggestion)'?"), "\(words): \(first)")
            } else {
                #expect(!err.contains("Did you mean"), "\(words): \(err)")
            }
        }
    }

    @Test("typingd replay and typingd exit with the statuses their --help states")
    func otherStatuses() throws {
        let dir = try Daemon.temporaryFolder("replay-statuses")
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = dir.appendingPathComponent("bad.rec")
        try "not a record\n".write(to: bad, atomically: true, encoding: .utf8)
        let replay = try Self.exitStatuses(["replay"])
        #expect(
            try WorkflowTests.typingd(["replay", bad.path]).2 == Self.status(replay, saying: "not a well-formed record")
        )
        #expect(
            try WorkflowTests.typingd(["replay", dir.appendingPathComponent("missing.rec").path]).2
                == Self.status(replay, saying: "cannot be read"))
        let main = try Self.exitStatuses([])
        #expect(try WorkflowTests.typingd(["--max-listed", "0"]).2 == Self.status(main, saying: "a bad option"))
        #expect(try WorkflowTests.typingd(["--clock", "manual"]).2 == Self.status(main, saying: "at the end of input"))
    }

    /// The sentences of `text`: its paragraphs, table cells and list items cut at
    /// sentence ends, white space folded.
    static func sentences(_ text: String) -> [String] {
        var sentences: [String] = []
        for paragraph in text.split(separator: "\n\n") {
            for part in paragraph.split(separator: "|").flatMap({ $0.split(separator: "\n- ") }) {
                let folded = part.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                let cut = folded.replacing(/([.!?]) (\S)/) { "\($0.output.1)\n\($0.output.2)" }
                sentences += cut.split(separator: "\n").map(String.init)
            }
        }
        return sentences
    }

    @Test(
        "every place that says a record replays byte for byte says the exception too: a killed session's, only up to its last recorded line"
    )
    func replayClaims() throws {
        let root = DocumentExample.root
        var documents = [
            "README.md": try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8),
            "Protocol.md": try String(contentsOf: root.appendingPathComponent("Protocol.md"), encoding: .utf8)
        ]
        for command in [[], ["replay"], ["check"]] {
            documents["typingd \(command.joined(separator: " ")) --help"] = try WorkflowTests.typingd(
                command + ["--help"]
            ).0
        }
        var claims = 0
        for (name, text) in documents {
            for sentence in Self.sentences(text)
            where sentence.contains("byte for byte") && sentence.contains(/record|replay/) {
                claims += 1
                #expect(
                    sentence.contains("killed") && sentence.contains("last recorded line"),
                    "\(name) says a record replays byte for byte without the exception:\n\(sentence)")
            }
        }
        #expect(claims >= 6, "the claims were not found: \(claims)")
    }
}
