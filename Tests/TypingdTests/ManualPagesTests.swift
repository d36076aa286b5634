import Foundation
import Testing
import typingd

/// The manual pages install.sh installs (`typingd --generate-manual`), made from the
/// commands' help: every default, every character, a synopsis that needs no
/// subcommand, pages only for real commands, and nothing for `mandoc -T lint` to say.
/// (.ci/check-install checks the installed pages again, with mandoc and man.)
@Suite("Manual pages")
struct ManualPagesTests {
    static func pages() throws -> [ManualPages.Page] {
        try ManualPages.pages(date: "November 24, 2026")
    }

    /// The commands as `--experimental-dump-help` describes them: typingd, then its
    /// subcommands with pages.
    static func commands() throws -> [ManualPages.CommandInfo] {
        let root = try JSONDecoder().decode(ManualPages.ToolInfo.self, from: Data(Typingd._dumpHelp().utf8)).command
        return [root] + root.manualSubcommands
    }

    /// The page's text lines (not macro lines), joined: what it says, escaped.
    static func prose(_ page: ManualPages.Page) -> String {
        page.text.split(separator: "\n").filter { !$0.hasPrefix(".") }.joined(separator: " ")
            .replacing("\\ ", with: " ")
    }

    @Test("one page per command: typingd, check and replay; none for ArgumentParser's help subcommand")
    func pageNames() throws {
        #expect(try Self.pages().map(\.fileName) == ["typingd.1", "typingd.check.1", "typingd.replay.1"])
    }

    @Test("SEE ALSO names only pages that are made (and installed), and each page names the others")
    func seeAlso() throws {
        let pages = try Self.pages()
        let names = Set(pages.map { String($0.fileName.dropLast(2)) })
        for page in pages {
            let section = page.text.split(separator: ".Sh SEE ALSO\n", maxSplits: 1).last.map(String.init) ?? ""
            let named = Set(section.matches(of: /\.(?:Xr|Sy) ([A-Za-z0-9._-]+)/).map { String($0.output.1) })
            #expect(named == names.subtracting([String(page.fileName.dropLast(2))]), "\(page.fileName): \(named)")
            #expect(!page.text.contains("typingd.help"), "\(page.fileName)")
        }
    }

    @Test("the synopsis shows typingd with no subcommand, then typingd check and typingd replay")
    func synopsis() throws {
        let root = try #require(try Self.pages().first)
        let synopsis = try #require(
            root.text.split(separator: ".Sh SYNOPSIS\n").last?.split(separator: ".Sh DESCRIPTION").first)
        let lines = synopsis.split(separator: "\n")
        #expect(lines.prefix(2) == [".Nm", ".Op Fl -clock Ar real|manual"], "\(synopsis)")
        #expect(!synopsis.contains("subcommand"), "\(synopsis)")
        #expect(synopsis.contains(".Nm\n.Cm check\n.Op Ar path ...\n"), "\(synopsis)")
        #expect(synopsis.contains(".Nm\n.Cm replay\n.Ar record\n"), "\(synopsis)")
    }

    @Test("every option that has a default shows it once, from its declaration: in --help and in the page")
    func defaults() throws {
        // Options with no default by nature: a list that starts empty, or a file
        // named only to do something more.
        let noDefault: Set<String> = ["phrases", "record", "junit"]
        for (command, page) in zip(try Self.commands(), try Self.pages()) {
            let help = try Self.help(command.isRoot ? [] : [command.commandName])
            for argument in command.visibleArguments where argument.kind != .flag {
                let name = argument.names?.first { $0.kind == "long" }?.name ?? argument.valueName ?? "?"
                if noDefault.contains(name) {
                    #expect(argument.defaultValue == nil, "--\(name)")
                    continue
                }
                let value = try #require(argument.defaultValue, "--\(name) of \(command.fullName) shows no default")
                #expect(
                    !(argument.abstract ?? "").lowercased().contains("default"),
                    "--\(name) tells its default in prose too: \(argument.abstract ?? "")")
                #expect(help.contains("default: \(value))"), "typingd \(command.commandName) --help: --\(name)")
                #expect(
                    Self.prose(page).contains("(default: \(ManualPages.escapedText(value)))"),
                    "\(page.fileName): --\(name)")
            }
        }
    }

    /// `typingd ARGUMENTS --help`, its lines joined.
    static func help(_ arguments: [String]) throws -> String {
        let (out, _, status) = try WorkflowTests.typingd(arguments + ["--help"])
        #expect(status == 0)
        return out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    @Test("no character of the help is lost (check's \"…\"), and no text line starts with . or ' (roff would eat it)")
    func characters() throws {
        for (command, page) in zip(try Self.commands(), try Self.pages()) {
            let texts =
                [command.abstract, command.discussion]
                + command.visibleArguments.flatMap { [$0.abstract, $0.discussion] }
            for scalar in texts.compactMap({ $0 }).joined().unicodeScalars where !scalar.isASCII {
                let escape = "\\[u" + String(format: "%04X", scalar.value) + "]"
                #expect(page.text.contains(escape), "\(page.fileName) lost U+\(String(format: "%04X", scalar.value))")
            }
            for line in page.text.split(separator: "\n") {
                #expect(!line.hasPrefix("'"), "\(page.fileName): \(line)")
                if line.hasPrefix(".") {
                    let macro = String(line.dropFirst().prefix { $0 != " " })
                    #expect(ManualPages.macroNames.contains(macro), "\(page.fileName): not a macro line: \(line)")
                }
            }
        }
        let check = try #require(try Self.pages().first { $0.fileName == "typingd.check.1" })
        #expect(check.text.contains(#""\[u2026]" or '\[u2026]'"#))
        #expect(
            ManualPages.textLines("It is on. 'manual' is the other; .hidden files too")
                == ["It is on.", "\\&'manual' is the other; .hidden files too"])
        #expect(
            ManualPages.block("  .dotfile\n  'quoted'") == [
                ".Bd -literal -offset indent", "\\&.dotfile", "\\&'quoted'", ".Ed"
            ])
    }

    @Test("mandoc -T lint has nothing to say about any page")
    func lint() throws {
        let mandoc = try Tools.require("mandoc", for: "the manual pages' lint")
        let folder = try Daemon.temporaryFolder("man")
        defer { try? FileManager.default.removeItem(at: folder) }
        for page in try Self.pages() {
            let file = folder.appendingPathComponent(page.fileName)
            try page.text.write(to: file, atomically: true, encoding: .utf8)
            let run = try TestProcess.run(URL(fileURLWithPath: mandoc), ["-T", "lint", file.path], stderr: .stdout)
            #expect(run.status == 0 && run.output.isEmpty, "\(page.fileName):\n\(run.output)")
        }
    }
}
