import ArgumentParser
import Glibc
import TypingCore
import TypingProtocol

/// The options that shape a session's output: what `typingd` runs with, what a
/// transcript's `NAME.args` may name for `typingd check`, and what a record's header
/// holds for `typingd replay`. One declaration, shared through `@OptionGroup`.
///
/// Every default and range here comes from the declarations in `TypingCore` and
/// `TypingProtocol` (``EngineConfiguration``, ``SessionConfiguration``): the help
/// cannot drift from the code.
public struct SessionOptions: ParsableArguments {
    /// How events are written.
    package enum Format: String, CaseIterable, ExpressibleByArgument {
        /// The protocol's JSON, one object per line.
        case json
        /// Lines for people at a terminal.
        case text
    }

    @Option(
        help: ArgumentHelp(
            "Where time comes from: 'real' (ms since start) or 'manual' (the commands' \"at\").",
            valueName: "real|manual"))
    package var clock: SessionConfiguration.Clock = .real

    @Option(
        name: .customLong("timeout-ms"), parsing: .unconditional,
        help: ArgumentHelp(
            "Milliseconds after the last keystroke at which typing stops (\(OptionRange.describe(EngineConfiguration.timeoutRange))).",
            valueName: "ms"))
    package var timeoutMs: Int = EngineConfiguration.defaults.timeout

    @Option(
        help: ArgumentHelp(
            "Phrases for 3+ typers: 'group' (\"A, B, and 2 others\") or 'compact' (\"A and 3 others\").",
            valueName: "group|compact"))
    package var style: EngineConfiguration.Style = EngineConfiguration.defaults.style

    @Option(
        name: .customLong("list-style"),
        help: ArgumentHelp(
            "The same, for chat-list rows (views opened with \"view\":\"list\").",
            valueName: "group|compact"))
    package var listStyle: EngineConfiguration.Style = EngineConfiguration.defaults.listStyle

    @Option(
        name: .customLong("phrases"),
        help: ArgumentHelp(
            "A phrase table to load: a JSON file, or a folder whose *.json files are all loaded (in byte order of their names). Repeatable; a table for a locale already loaded, English included, replaces it. Users choose one with \"locale\".",
            valueName: "path"))
    package var phrases: [String] = []

    @Option(
        name: .customLong("phrase-table"),
        help: ArgumentHelp(
            "A phrase table given as JSON text (what the header of a version 1 record holds); loaded after the --phrases ones.",
            valueName: "json", visibility: .hidden))
    package var phraseTables: [String] = []

    @Option(
        name: .customLong("default-locale"),
        help: ArgumentHelp(
            "The locale of users who give none: the table they get. A locale with no table loaded (see --phrases) falls back to en, silently, as a user's own locale does.",
            valueName: "tag"))
    package var defaultLocale: String = PhraseBook.english.defaultLocale

    @Option(
        help: ArgumentHelp(
            "How events are written: 'json' (the protocol) or 'text' (for people: \"12.345  team  bob sees: Alice is typing...\").",
            valueName: "json|text"))
    package var format: Format = .json

    @Flag(help: "Also write a 'typing' event whenever a streak starts or stops, with the reason.")
    package var typingEvents = EngineConfiguration.defaults.typingEvents

    @Flag(help: "At the end of input, exit at once instead of letting active streaks time out.")
    package var noDrain = false

    @Option(
        help: ArgumentHelp(
            "Who receives indicators: 'members' (every member) or 'open' (members whose view is open).",
            valueName: "members|open"))
    package var audience: EngineConfiguration.Audience = EngineConfiguration.defaults.audience

    @Option(
        help: ArgumentHelp(
            "How typers are listed: 'start' (when their streak began), 'recent' (latest keystroke first) or 'name'. Named typers come first.",
            valueName: "start|recent|name"))
    package var order: EngineConfiguration.Order = EngineConfiguration.defaults.order

    @Option(
        help: ArgumentHelp(
            "With --clock manual, what a command whose \"at\" is earlier than the current time gets: 'refuse' (a time_backwards error) or 'clamp' (it is applied at the current time). 'clamp' is for several writers stamping one log, such as routers feeding a partition.",
            valueName: "refuse|clamp"))
    package var lateAt: EngineConfiguration.LateAt = EngineConfiguration.defaults.lateAt

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The most user ids an indicator lists; the others are counted in \"more\" (\(OptionRange.describe(EngineConfiguration.maxListedRange))).",
            valueName: "n"))
    package var maxListed: Int = EngineConfiguration.defaults.maxListed

    @Option(
        name: .customLong("several-after"), parsing: .unconditional,
        help: ArgumentHelp(
            "Big rooms: a clause of more than n typers doing the same thing names nobody and is phrased with the reader's table's 'several' (in English, with n = 3, four typers read \"Several people are typing...\"; a table without 'several' says \"4 people\"). Clauses of n or fewer are phrased as usual, and the ids an indicator lists do not change (\(OptionRange.describe(EngineConfiguration.severalAfterRange))).",
            valueName: "n"))
    var severalLimit = OptionalNumber(value: EngineConfiguration.defaults.severalAfter)

    /// `--several-after`, nil when not given.
    package var severalAfter: Int? { severalLimit.value }

    @Option(
        name: .customLong("quiet-above"), parsing: .unconditional,
        help: ArgumentHelp(
            "Big rooms: in a conversation of more than n members every screen shows nobody typing; those that showed someone are sent the empty indicator once, then nothing is written there (a keystroke costs the same in a room of 100,000 as of 100). Streaks, typing events and query go on; back at n members or fewer, every screen is shown its typers again (\(OptionRange.describe(EngineConfiguration.quietAboveRange))).",
            valueName: "n"))
    var quietLimit = OptionalNumber(value: EngineConfiguration.defaults.quietAbove)

    /// `--quiet-above`, nil when not given.
    package var quietAbove: Int? { quietLimit.value }

    @Option(
        name: .customLong("announce-after-ms"), parsing: .unconditional,
        help: ArgumentHelp(
            "For screen readers: once a screen's sentence has stayed the same for ms milliseconds, it is written once more as an 'announce' event (a live region reads that, not every flicker of the indicator). A sentence already announced to that screen is not announced again until it changes (\(OptionRange.describe(EngineConfiguration.announceAfterRange))).",
            valueName: "ms"))
    var announceDelay = OptionalNumber(value: EngineConfiguration.defaults.announceAfter)

    /// `--announce-after-ms`, nil when not given.
    package var announceAfter: Int? { announceDelay.value }

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The longest input line in bytes; longer lines get a line_too_long error and are skipped (\(OptionRange.describe(SessionConfiguration.maxLineBytesRange))).",
            valueName: "bytes"))
    package var maxLineBytes: Int = SessionConfiguration.defaultMaxLineBytes

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The most members one conversation may have (\(OptionRange.describe(EngineConfiguration.limitRange))).",
            valueName: "n"))
    package var maxMembers: Int = EngineConfiguration.defaults.maxMembers

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The most memberships over all conversations (\(OptionRange.describe(EngineConfiguration.limitRange))).",
            valueName: "n"))
    package var maxMemberships: Int = EngineConfiguration.defaults.maxMemberships

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The most live conversations, those with members (\(OptionRange.describe(EngineConfiguration.limitRange))).",
            valueName: "n"))
    package var maxConversations: Int = EngineConfiguration.defaults.maxConversations

    @Option(
        name: .customLong("max-output-per-line"), parsing: .unconditional,
        help: ArgumentHelp(
            "The most bytes of events one command may cause; a command that could cause more (by the bound in Protocol.md, \"Bounded output\") gets a limit error and changes nothing (\(OptionRange.describe(EngineConfiguration.maxOutputPerLineRange))).",
            valueName: "bytes"))
    var outputCap = OutputCap(bytes: EngineConfiguration.defaults.maxOutputPerLine)

    /// `--max-output-per-line`, nil for no cap.
    package var maxOutputPerLine: Int? { outputCap.bytes }

    public init() {}

    public func validate() throws {
        try OptionRange.check("--timeout-ms", timeoutMs, in: EngineConfiguration.timeoutRange)
        if let maxOutputPerLine {
            try OptionRange.check(
                "--max-output-per-line", maxOutputPerLine, in: EngineConfiguration.maxOutputPerLineRange)
        }
        try OptionRange.check("--max-listed", maxListed, in: EngineConfiguration.maxListedRange)
        if let quietAbove {
            try OptionRange.check("--quiet-above", quietAbove, in: EngineConfiguration.quietAboveRange)
        }
        if let announceAfter {
            try OptionRange.check("--announce-after-ms", announceAfter, in: EngineConfiguration.announceAfterRange)
        }
        if let severalAfter {
            try OptionRange.check("--several-after", severalAfter, in: EngineConfiguration.severalAfterRange)
        }
        try OptionRange.check("--max-line-bytes", maxLineBytes, in: SessionConfiguration.maxLineBytesRange)
        try OptionRange.check("--max-members", maxMembers, in: EngineConfiguration.limitRange)
        try OptionRange.check("--max-memberships", maxMemberships, in: EngineConfiguration.limitRange)
        try OptionRange.check("--max-conversations", maxConversations, in: EngineConfiguration.limitRange)
        if lateAt == .clamp && clock != .manual {
            throw ValidationError("--late-at clamp needs --clock manual: on the real clock no command carries \"at\"")
        }
        guard PhraseTable.isLocaleTag(defaultLocale) else {
            throw ValidationError(
                "--default-locale must be a language tag (1 to 35 ASCII letters, digits and \"-\", such as de or pt-BR), not \(ArgumentWords.quote(defaultLocale))"
            )
        }
    }

    /// The settings the options describe, with the phrase tables they name loaded
    /// (relative paths from `folder`, or the working directory when nil), then
    /// `recorded` (a record's table lines).
    public func configuration(
        relativeTo folder: String? = nil,
        recorded: [PhraseTable] = []
    ) throws(PhraseFiles.Failure) -> SessionConfiguration {
        try configuration(tables: try loadTables(relativeTo: folder).map(\.table) + recorded)
    }

    /// The settings the options describe, with `tables` loaded (after built-in English).
    package func configuration(tables: [PhraseTable]) throws(PhraseFiles.Failure) -> SessionConfiguration {
        SessionConfiguration(
            engine: EngineConfiguration(
                timeout: timeoutMs, style: style, typingEvents: typingEvents,
                maxMembers: maxMembers, maxMemberships: maxMemberships,
                maxConversations: maxConversations, audience: audience, order: order,
                maxListed: maxListed, maxOutputPerLine: maxOutputPerLine,
                listStyle: listStyle, phrases: try phraseBook(tables),
                lateAt: lateAt, quietAbove: quietAbove, severalAfter: severalAfter,
                announceAfter: announceAfter),
            clock: clock, maxLineBytes: maxLineBytes, drain: !noDrain)
    }

    /// The tables `--phrases` and `--phrase-table` name, loaded and checked, in
    /// that order, with their texts.
    package func loadTables(relativeTo folder: String?) throws(PhraseFiles.Failure) -> [PhraseFiles.Loaded] {
        var tables: [PhraseFiles.Loaded] = []
        for path in phrases {
            tables += try PhraseFiles.load(path, relativeTo: folder)
        }
        for (index, text) in phraseTables.enumerated() {
            do {
                let bytes = Array(text.utf8)
                tables.append(
                    PhraseFiles.Loaded(
                        table: try bytes.withUnsafeBytes { bytes throws(PhraseTable.Error) in
                            try PhraseTableFile.decode(bytes)
                        }, text: bytes))
            } catch {
                throw PhraseFiles.Failure(description: "--phrase-table \(index + 1): \(error)")
            }
        }
        return tables
    }

    /// The book of `tables`, for the default locale.
    package func phraseBook(_ tables: [PhraseTable]) throws(PhraseFiles.Failure) -> PhraseBook {
        do {
            return try PhraseBook(tables: tables, defaultLocale: defaultLocale)
        } catch {
            throw PhraseFiles.Failure(description: "--default-locale: \(error)")
        }
    }

    /// The options that shape the output, every one spelled out (defaults too, so
    /// that a record replays the same under a typingd with other defaults): what a
    /// record's header holds. The clock and draining are left out: a replay takes
    /// its time, and its end, from the record. Every option declared here is either
    /// written or in ``unrecorded``, saying why (RecordWordsTests holds them together).
    package var recordWords: [String] {
        var words = [
            "--format", format.rawValue, "--timeout-ms", String(timeoutMs), "--style", style.rawValue,
            "--list-style", listStyle.rawValue, "--default-locale", defaultLocale,
            "--audience", audience.rawValue, "--order", order.rawValue, "--max-listed", String(maxListed),
            "--max-line-bytes", String(maxLineBytes), "--max-members", String(maxMembers),
            "--max-memberships", String(maxMemberships), "--max-conversations", String(maxConversations)
        ]
        if typingEvents { words.append("--typing-events") }
        if let maxOutputPerLine { words += ["--max-output-per-line", String(maxOutputPerLine)] }
        // Only when given: a record without it replays as it ran, with no limit.
        if let quietAbove { words += ["--quiet-above", String(quietAbove)] }
        if let announceAfter { words += ["--announce-after-ms", String(announceAfter)] }
        if let severalAfter { words += ["--several-after", String(severalAfter)] }
        return words
    }

    /// The options a record's header leaves out (long names), and why.
    package static let unrecorded: [String: String] = [
        "clock": "a replay takes its time from the record, and a record needs the real clock",
        "no-drain": "a replay ends where the record says the session ended",
        "phrases": "the tables it loads are written after the header, each on a #table line (recordHeader(tables:))",
        "phrase-table": "as --phrases: a table given as text goes on a #table line (only version 1 headers held it)",
        "late-at": "it needs --clock manual and a record the real clock: in a record it is always refuse"
    ]

    /// What a record of a session with these options and `tables` (as loaded)
    /// starts with: every table goes in, in the order it was loaded, as its text, so
    /// the record replays the same wherever the tables' files went, and the replay
    /// builds the same book (see ``RecordFormat``).
    package func recordHeader(tables: [PhraseFiles.Loaded]) -> RecordHeader {
        RecordHeader(options: recordWords, tables: tables.map(\.text))
    }
}

/// `--max-output-per-line`'s value: a number of bytes, or no cap. Its default is
/// `EngineConfiguration.defaults.maxOutputPerLine`, which `--help` and the manual
/// show as `(default: no cap)`: an optional option would show no default at all.
struct OutputCap: ExpressibleByArgument {
    /// The cap, nil for none.
    var bytes: Int?

    init(bytes: Int?) {
        self.bytes = bytes
    }

    init?(argument: String) {
        guard let bytes = Int(argument: argument) else { return nil }
        self.bytes = bytes
    }

    var defaultValueDescription: String { bytes.map(String.init) ?? "no cap" }
}

/// The value of `--several-after` (typers), `--quiet-above` (members) or
/// `--announce-after-ms` (milliseconds): a number, or none. Like ``OutputCap``, so that `--help` and the manual show
/// `(default: none)`.
struct OptionalNumber: ExpressibleByArgument {
    /// The number, nil for none.
    var value: Int?

    init(value: Int?) {
        self.value = value
    }

    init?(argument: String) {
        guard let value = Int(argument: argument) else { return nil }
        self.value = value
    }

    var defaultValueDescription: String { value.map(String.init) ?? "none" }
}

/// Ranges of option values, in messages and help.
package enum OptionRange {
    /// Fails unless `value` of `option` is in `range`.
    package static func check(_ option: String, _ value: Int, in range: ClosedRange<Int>) throws {
        guard range.contains(value) else {
            throw ValidationError("\(option) must be \(describe(range)), not \(value)")
        }
    }

    /// "from 1 to 86400000", or "at least 1".
    package static func describe(_ range: ClosedRange<Int>) -> String {
        range.upperBound == Int.max ? "at least \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"
    }
}

extension SessionConfiguration.Clock: ExpressibleByArgument {}
extension EngineConfiguration.Style: ExpressibleByArgument {}
extension EngineConfiguration.Audience: ExpressibleByArgument {}
extension EngineConfiguration.Order: ExpressibleByArgument {}
extension EngineConfiguration.LateAt: ExpressibleByArgument {}

extension SessionOptions {
    /// Options given as one text (a setting such as an environment variable that holds options),
    /// split into words as a shell would (quotes, backslashes).
    public static func words(_ text: String) throws -> [String] {
        try ArgumentWords.split(text)
    }
}
