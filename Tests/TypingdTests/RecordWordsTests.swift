import TypingdOptions
import ArgumentParser
import Foundation
import Testing
import typingd

/// A record's header (`SessionOptions.recordWords`) holds every option that shapes the
/// output, and its `#table` lines the phrase tables, so that a replay produces the
/// same: the options are written out by hand there, so these tests hold them against
/// the declarations.
@Suite("Record header options")
struct RecordWordsTests {
    /// SessionOptions alone, as a command, to read its declarations from ArgumentParser.
    struct Declared: ParsableCommand {
        @OptionGroup var options: SessionOptions
    }

    /// The long names of every option and flag SessionOptions declares, hidden ones too.
    static func declaredNames() throws -> [String] {
        let tool = try JSONDecoder().decode(ManualPages.ToolInfo.self, from: Data(Declared._dumpHelp().utf8))
        return (tool.command.arguments ?? []).compactMap { argument in
            argument.names?.first { $0.kind == "long" }?.name
        }.filter { $0 != "help" }
    }

    /// A value other than the default for each recorded option (a flag: set).
    static func nonDefault() throws -> [String: [String]] {
        [
            "format": ["--format", "text"], "timeout-ms": ["--timeout-ms", "1234"], "style": ["--style", "compact"],
            "list-style": ["--list-style", "group"], "default-locale": ["--default-locale", "de"],
            "typing-events": ["--typing-events"],
            "audience": ["--audience", "open"], "order": ["--order", "name"], "max-listed": ["--max-listed", "7"],
            "max-line-bytes": ["--max-line-bytes", "999"], "max-members": ["--max-members", "11"],
            "max-memberships": ["--max-memberships", "12"], "max-conversations": ["--max-conversations", "13"],
            "max-output-per-line": ["--max-output-per-line", "5000"],
            "several-after": ["--several-after", "4"], "quiet-above": ["--quiet-above", "50"],
            "announce-after-ms": ["--announce-after-ms", "1500"]
        ]
    }

    @Test(
        "every option SessionOptions declares is written into a record's header, or SessionOptions.unrecorded says why not"
    )
    func everyOptionRecorded() throws {
        let declared = try Self.declaredNames()
        #expect(declared.count >= 17, "\(declared)")
        let values = try Self.nonDefault()
        for name in declared where SessionOptions.unrecorded[name] == nil {
            #expect(values[name] != nil, "--\(name) is neither in this test's values nor in SessionOptions.unrecorded")
        }
        #expect(
            Set(SessionOptions.unrecorded.keys).isSubset(of: declared),
            "unrecorded names no option: \(SessionOptions.unrecorded.keys)")
        // Every one set to its value: the header names each, with that value.
        let options = try SessionOptions.parse(values.values.flatMap { $0 })
        let words = options.recordWords
        for (name, given) in values {
            guard let at = words.firstIndex(of: "--\(name)") else {
                Issue.record(
                    "--\(name) is declared and not in SessionOptions.unrecorded, but the header leaves it out: \(words)"
                )
                continue
            }
            if given.count == 2 {
                #expect(words.indices.contains(at + 1) && words[at + 1] == given[1], "--\(name): \(words)")
            }
        }
        for name in SessionOptions.unrecorded.keys {
            #expect(!words.contains("--\(name)"), "--\(name) is recorded, yet listed as unrecorded")
        }
    }

    @Test("the header's words give the session the same configuration and format, with the replay's clock and end")
    func wordsReplayTheSame() throws {
        let german = DocumentExample.root.appendingPathComponent("phrases/de.json").path
        let options = try SessionOptions.parse(try Self.nonDefault().values.flatMap { $0 } + ["--phrases", german])
        let header = options.recordHeader(tables: try options.loadTables(relativeTo: nil))
        let germanText = Array(try Data(contentsOf: URL(fileURLWithPath: german)))
        #expect(header.tables.count == 1 && header.tables.first == germanText)
        var replayed = try SessionOptions.parse(header.options)
        // The replay loads the header's tables from their texts.
        replayed.phraseTables = header.tables.map { String(decoding: $0, as: UTF8.self) }
        replayed.clock = .real // as RecordOptions.parse does
        replayed.noDrain = true
        var expected = try options.configuration()
        expected.clock = .real
        expected.drain = false
        #expect(try replayed.configuration() == expected)
        #expect(replayed.format == options.format)
        // And the defaults, spelled out.
        let defaults = try SessionOptions.parse([])
        #expect(try SessionOptions.parse(defaults.recordWords).configuration() == (try defaults.configuration()))
    }
}
