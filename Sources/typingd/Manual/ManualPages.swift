import TypingdOptions
import ArgumentParser
import FoundationEssentials
import Glibc

/// typingd's manual pages, in mdoc, made from the commands' own help (what
/// `typingd --experimental-dump-help` describes): `typingd --generate-manual DIR`
/// writes them, and install.sh installs them. The help is their one source: every
/// option's `(default: …)`, every exit status, every word.
///
/// Why not swift-argument-parser's `generate-manual` plugin: it builds the whole
/// package again (install.sh built everything twice more for it), drops every
/// non-ASCII character (`"…"` became `""`), shows no option's default, writes
/// `typingd subcommand` as if a subcommand were required, points to a page for
/// its `help` subcommand, and writes lines that `mandoc -T lint` warns about (a
/// sentence in the middle of a line, lines over 80 bytes, `.Pp` before `.It`).
package enum ManualPages {
    /// One page: its file name (`typingd.check.1`) and its mdoc source.
    package struct Page: Equatable {
        package let fileName: String
        package let text: String
    }

    /// The longest text line written, in bytes (`mandoc -T lint` warns past 80).
    static let maxLineBytes = 80

    /// The pages of `typingd` and of its subcommands (not ArgumentParser's `help`,
    /// which `typingd --help` covers), dated `date` ("November 24, 2026").
    package static func pages(date: String) throws -> [Page] {
        try pages(dumpHelp: Typingd._dumpHelp(), date: date)
    }

    /// The pages described by `json`, the output of `--experimental-dump-help`.
    static func pages(dumpHelp json: String, date: String) throws -> [Page] {
        let tool = try JSONDecoder().decode(ToolInfo.self, from: Data(json.utf8))
        guard tool.serializationVersion == 0 else {
            throw ManualError(
                description:
                    "--experimental-dump-help wrote version \(tool.serializationVersion) of its format; this generator reads version 0"
            )
        }
        let root = tool.command
        let commands = [root] + root.manualSubcommands
        let titles = commands.map(\.title)
        return commands.map { command in
            Page(
                fileName: command.title + ".1",
                text: page(command, root: root, date: date, seeAlso: titles.filter { $0 != command.title }))
        }
    }

    struct ManualError: Error, CustomStringConvertible {
        let description: String
    }

    /// Today (or SOURCE_DATE_EPOCH's day, for reproducible builds), as `.Dd` wants it.
    static func today() -> String {
        var seconds = time(nil)
        if let epoch = getenv("SOURCE_DATE_EPOCH").flatMap({ Int(String(cString: $0)) }) { seconds = epoch }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let months = [
            "January", "February", "March", "April", "May", "June", "July", "August", "September",
            "October", "November", "December"
        ]
        return "\(months[Int(parts.tm_mon)]) \(parts.tm_mday), \(parts.tm_year + 1900)"
    }

    /// Writes the pages into `folder`, which must exist.
    static func write(to folder: String) throws {
        for page in try pages(date: today()) {
            try FileBytes.write(Array(page.text.utf8), to: folder + "/" + page.fileName)
        }
    }

    // MARK: The page

    /// The mdoc source of `command`'s page.
    static func page(_ command: CommandInfo, root: CommandInfo, date: String, seeAlso: [String]) -> String {
        var out: [String] = []
        out.append(".Dd \(date)")
        out.append(".Dt \(command.title.uppercased()) 1")
        out.append(".Os")
        out.append(".Sh NAME")
        out.append(command.isRoot ? ".Nm \(macroArgument(command.commandName))" : ".Nm \"\(command.fullName)\"")
        var abstract = command.abstract ?? ""
        while abstract.hasSuffix(".") { abstract.removeLast() }
        out.append(".Nd \(macroArguments(abstract))")

        out.append(".Sh SYNOPSIS")
        out += synopsis(of: command)
        if command.isRoot {
            // The root command runs with no subcommand; the subcommands follow it.
            for subcommand in command.manualSubcommands {
                out += synopsis(of: subcommand, as: subcommand.commandName)
            }
        }

        let paragraphs = (command.discussion ?? "").split(separator: "\n\n").map(String.init)
        let exitStatus = paragraphs.filter { $0.hasPrefix("Exit status:") }
        out.append(".Sh DESCRIPTION")
        out += blocks(paragraphs.filter { !$0.hasPrefix("Exit status:") })
        for (title, arguments) in command.argumentGroups {
            out.append(".Ss \(macroArguments(title))")
            out.append(".Bl -tag -width Ds")
            for argument in arguments {
                out.append(".It " + argument.item)
                var text = argument.abstract ?? ""
                if let discussion = argument.discussion, !discussion.isEmpty { text += "\n\n" + discussion }
                out += blocks(text.split(separator: "\n\n").map(String.init))
                if let value = argument.defaultValue, argument.kind != .flag {
                    out += textLines("(default: \(value))")
                }
            }
            out.append(".El")
        }

        out.append(".Sh EXIT STATUS")
        if exitStatus.isEmpty {
            out.append(".Ex -std")
        } else {
            out += blocks(exitStatus)
        }

        // The other pages, as `typingd.check(1)`. Not with `Xr`: `mandoc -T lint`
        // looks an `Xr` up among the system's pages (by default /usr/share/man) and
        // warns when it finds none, as for a page installed under /usr/local.
        if !seeAlso.isEmpty {
            out.append(".Sh SEE ALSO")
            for (index, title) in seeAlso.enumerated() {
                out.append(".Sy \(macroArgument(title)) Ns (1)" + (index < seeAlso.count - 1 ? " ," : ""))
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// The synopsis lines of `command`, after `.Nm` and, for a subcommand shown on
    /// its parent's page, `.Cm name`. `--help` and `--version` are left out: the
    /// description lists them.
    static func synopsis(of command: CommandInfo, as subcommand: String? = nil) -> [String] {
        var out = [".Nm"]
        if let subcommand { out.append(".Cm \(macroArgument(subcommand))") }
        for argument in command.visibleArguments where !argument.isHelpOrVersion {
            out.append(argument.synopsis)
        }
        return out
    }

    // MARK: Text

    /// Paragraphs of help text, `.Pp` between them (but before a display, which
    /// makes its own space).
    static func blocks(_ paragraphs: [String]) -> [String] {
        var out: [String] = []
        for paragraph in paragraphs {
            let lines = block(paragraph)
            if !out.isEmpty && lines.first != ".Bd -literal -offset indent" { out.append(".Pp") }
            out += lines
        }
        return out
    }

    /// One paragraph of help text: prose, filled, or a literal display when every
    /// line is indented (an example command).
    package static func block(_ paragraph: String) -> [String] {
        let lines = paragraph.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.allSatisfy({ $0.hasPrefix("  ") || $0.isEmpty }) {
            let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
            return [".Bd -literal -offset indent"]
                + lines.map { line in line.isEmpty ? "" : escapedLine(String(line.dropFirst(indent))) }
                .map { $0.isEmpty ? "\\&" : $0 }
                + [".Ed"]
        }
        return textLines(lines.map { trimmed($0) }.joined(separator: " "))
    }

    /// Prose as mdoc text lines: each sentence starts a line (`mandoc -T lint`:
    /// "new sentence, new line"), and no line is longer than ``maxLineBytes``.
    package static func textLines(_ prose: String) -> [String] {
        var lines: [String] = []
        for sentence in sentences(prose) {
            // A run of spaces inside a sentence ("12.345  team") is kept: each space
            // past the first is an unbreakable `\ ` after the word before it.
            var words: [String] = []
            for word in sentence.split(separator: " ", omittingEmptySubsequences: false) {
                if word.isEmpty, !words.isEmpty {
                    words[words.count - 1] += "\\ "
                } else if !word.isEmpty {
                    words.append(escapedText(String(word)))
                }
            }
            var line = ""
            for escaped in words {
                if line.isEmpty {
                    line = escaped
                } else if line.utf8.count + 1 + escaped.utf8.count <= maxLineBytes {
                    line += " " + escaped
                } else {
                    lines.append(line)
                    line = escaped
                }
            }
            if !line.isEmpty { lines.append(line) }
        }
        return lines.map(protectingLineStart)
    }

    /// `prose` cut after every sentence end: `.`, `!` or `?`, maybe closed by `)`,
    /// `]`, `"` or `'`, then a space and a word that starts like a sentence.
    static func sentences(_ prose: String) -> [String] {
        let characters = Array(prose)
        var sentences: [String] = []
        var start = 0
        var index = 0
        while index < characters.count {
            if ".!?".contains(characters[index]) {
                var end = index + 1
                while end < characters.count && ")]\"'".contains(characters[end]) { end += 1 }
                if end + 1 < characters.count && characters[end] == " "
                    && (characters[end + 1].isUppercase || "(\"'`".contains(characters[end + 1]))
                {
                    sentences.append(String(characters[start..<end]))
                    start = end + 1
                    index = end + 1
                    continue
                }
            }
            index += 1
        }
        if start < characters.count { sentences.append(String(characters[start...])) }
        return sentences.map { trimmed($0) }.filter { !$0.isEmpty }
    }

    /// `text` without the spaces around it.
    static func trimmed<S: StringProtocol>(_ text: S) -> String {
        String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }

    /// A text line as roff reads it: a line that starts with `.` or `'` would be a
    /// request (and vanish), so it starts with the zero-width `\&`.
    static func protectingLineStart(_ line: String) -> String {
        line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : line
    }

    /// A whole line of literal text, escaped and protected.
    static func escapedLine(_ line: String) -> String {
        protectingLineStart(escapedText(line))
    }

    /// Text for roff: `\` as `\e`, and every non-ASCII character as `\[uXXXX]`
    /// (the `…` of `"…"` is kept, in whatever encoding the page is read).
    package static func escapedText(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                out += "\\e"
            } else if scalar.isASCII {
                out.unicodeScalars.append(scalar)
            } else {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            }
        }
        return out
    }

    /// The names of mdoc's macros: a word on a macro line that is one would be called.
    package static let macroNames: Set<String> = Set(
        """
        %A %B %C %D %I %J %N %O %P %Q %R %T %U %V Ac Ad An Ao Ap Aq Ar At Bc Bd Bf Bk Bl Bo Bq Brc Bro Brq \
        Bsx Bt Bx Cd Cm D1 Db Dc Dd Dl Do Dq Dt Dv Dx Ec Ed Ef Ek El Em En Eo Er Es Ev Ex Fa Fc Fd Fl Fn Fo \
        Fr Ft Fx Hf Ic In It Lb Li Lk Lp Ms Mt Nd Nm No Ns Nx Oc Oo Op Os Ot Ox Pa Pc Pf Po Pp Pq Qc Ql Qo \
        Qq Re Rs Rv Sc Sh Sm So Sq Ss St Sx Sy Ta Tg Tn Ud Ux Va Vt Xc Xo Xr
        """.split(separator: " ").map(String.init))

    /// Words for a macro line: escaped, quotes as `\(dq`, and a word that is a
    /// macro's name (such as `In` or `No`) kept from being called.
    static func macroArguments(_ text: String) -> String {
        text.split(separator: " ").map { macroArgument(String($0)) }.joined(separator: " ")
    }

    /// One word for a macro line (see ``macroArguments(_:)``).
    static func macroArgument(_ word: String) -> String {
        let escaped = escapedText(word).replacing("\"", with: "\\(dq")
        return macroNames.contains(word) ? "\\&" + escaped : escaped
    }

    // MARK: What --experimental-dump-help writes (ArgumentParserToolInfo's ToolInfoV0)

    /// The first option among `arguments` that belongs to typingd's session (the
    /// root command) and not to `subcommand`: ArgumentParser accepts the root's
    /// options around a subcommand, where `check` and `replay` would silently ignore
    /// them (`typingd replay REC --format text` wrote JSON). Names come from the
    /// commands' own declarations (their dumped help), so a new option is covered.
    static func sessionOptionGiven(to subcommand: any ParsableCommand.Type, in arguments: ArraySlice<String>) -> String?
    {
        func names(_ info: CommandInfo?) -> Set<String> {
            Set(
                (info?.arguments ?? []).filter { $0.kind != .positional }.flatMap { argument in
                    (argument.names ?? []).map { ($0.kind == "long" ? "--" : "-") + $0.name }
                })
        }
        guard let tool = try? JSONDecoder().decode(ToolInfo.self, from: Data(Typingd._dumpHelp().utf8)) else {
            return nil
        }
        let sub = tool.command.subcommands?.first { $0.commandName == subcommand._commandName }
        let session = names(tool.command).subtracting(names(sub)).subtracting(["--help", "-h", "--version"])
        for argument in arguments {
            if argument == "--" { break }
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            if argument.hasPrefix("-") && session.contains(name) { return name }
        }
        return nil
    }

    package struct ToolInfo: Decodable {
        let serializationVersion: Int
        package let command: CommandInfo
    }

    package struct CommandInfo: Decodable {
        package let commandName: String
        let superCommands: [String]?
        package let abstract: String?
        package let discussion: String?
        let shouldDisplay: Bool?
        let subcommands: [CommandInfo]?
        package let arguments: [ArgumentInfo]?

        package var isRoot: Bool { (superCommands ?? []).isEmpty }
        /// `typingd check`.
        package var fullName: String { ((superCommands ?? []) + [commandName]).joined(separator: " ") }
        /// `typingd.check`: the page's name.
        var title: String { ((superCommands ?? []) + [commandName]).joined(separator: ".") }
        /// The subcommands with pages: not hidden ones, nor ArgumentParser's `help`.
        package var manualSubcommands: [CommandInfo] {
            (subcommands ?? []).filter { $0.shouldDisplay != false && $0.commandName != "help" }
        }
        package var visibleArguments: [ArgumentInfo] { (arguments ?? []).filter(\.shouldDisplay) }

        /// The arguments as `--help` groups them: by section title, in order, the
        /// positional ones under "Arguments", the rest under "Options".
        var argumentGroups: [(String, [ArgumentInfo])] {
            var groups: [(String, [ArgumentInfo])] = []
            for argument in visibleArguments {
                let title = argument.sectionTitle ?? (argument.kind == .positional ? "Arguments" : "Options")
                if let index = groups.firstIndex(where: { $0.0 == title }) {
                    groups[index].1.append(argument)
                } else {
                    groups.append((title, [argument]))
                }
            }
            let order = { (title: String) in title == "Arguments" ? 0 : title == "Options" ? 2 : 1 }
            return groups.enumerated().sorted { (order($0.element.0), $0.offset) < (order($1.element.0), $1.offset) }
                .map(\.element)
        }
    }

    package struct ArgumentInfo: Decodable {
        package enum Kind: String, Decodable {
            case positional, option, flag
        }

        package struct Name: Decodable {
            package let kind: String
            package let name: String
        }

        package let kind: Kind
        let shouldDisplay: Bool
        let sectionTitle: String?
        let isOptional: Bool
        let isRepeating: Bool
        package let names: [Name]?
        package let valueName: String?
        package let defaultValue: String?
        package let abstract: String?
        package let discussion: String?

        var isHelpOrVersion: Bool {
            kind == .flag && (names ?? []).contains { $0.kind == "long" && ($0.name == "help" || $0.name == "version") }
        }

        /// `Fl h , Fl -help`: the names, short ones first.
        var flags: String {
            let sorted = (names ?? []).filter { $0.kind == "short" } + (names ?? []).filter { $0.kind != "short" }
            return sorted.map { name in
                "Fl " + macroArgument((name.kind == "long" ? "-" : "") + name.name)
            }.joined(separator: " , ")
        }

        /// The value's name, as `Ar`.
        var value: String { "Ar " + macroArgument(valueName ?? "value") }

        /// The head of its item in the description list.
        var item: String {
            switch kind {
            case .positional: return value + (isRepeating ? " ..." : "")
            case .option: return flags + " " + value
            case .flag: return flags
            }
        }

        /// Its synopsis line: `[--clock real|manual]`, `[--phrases path] ...`, `[path ...]`.
        var synopsis: String {
            let preferred = (names ?? []).first { $0.kind != "short" } ?? (names ?? []).first
            let flag = preferred.map { "Fl " + macroArgument(($0.kind == "long" ? "-" : "") + $0.name) } ?? ""
            switch kind {
            case .positional:
                let words = value + (isRepeating ? " ..." : "")
                return isOptional ? ".Op " + words : "." + words
            case .option:
                if isRepeating { return ".Oo \(flag) \(value) Oc ..." }
                return isOptional ? ".Op \(flag) \(value)" : ".\(flag) \(value)"
            case .flag:
                return ".Op \(flag)"
            }
        }
    }
}
