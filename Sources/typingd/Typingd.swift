import ArgumentParser
import Glibc
import TypingCore
import TypingProtocol

/// The `typingd` command: options, then the event loop.
///
/// Every default and range shown here comes from the declarations in `TypingCore`
/// and `TypingProtocol` (``EngineConfiguration``, ``SessionConfiguration``), and
/// the list of commands from ``Command/Name``: the help cannot drift from the code.
@main
struct Typingd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "typingd",
        abstract: "Typing indicators for chat: JSON commands in on stdin, indicator events out on stdout.",
        usage: """
        typingd [<options>] < commands.jsonl > events.jsonl
          typingd check [<path> ...] [--bless] [--junit <file>]
        """,
        discussion: """
        typingd reads one JSON command per line on stdin and keeps, per conversation, \
        who is a member and who is typing. On stdout it writes one JSON event per line, \
        above all the indicator each member should see ("Alice and Bob are typing..."). \
        Typing ends \(EngineConfiguration.defaults.timeout / 1000) s after the last keystroke \
        (--timeout-ms, or the keystroke's own "timeout_ms"), at once on send, on an emptied \
        input box, on closing the chat screen, on leave, removal or going offline. Nobody \
        sees their own typing, and users who turned off "send_typing" are never seen typing.

        Views: "open" and "close" say which conversation a person has on screen. With \
        --audience open, only they receive indicators, so in a big room the output \
        follows the people watching, not the member count.

        Try it (manual clock: time is what each command's "at" says, in ms):

          printf '%s\\n' \\
            '{"cmd":"join","conv":"dm","user":"alice","name":"Alice"}' \\
            '{"cmd":"join","conv":"dm","user":"bob","name":"Bob"}' \\
            '{"cmd":"type","conv":"dm","user":"alice","at":1000}' \\
            | typingd --clock manual

        writes what bob sees: first "Alice is typing...", then, when input ends and \
        the streak times out at 4000, the empty indicator.

        By default (--clock real) typingd runs live: commands happen when they are \
        read, typing clears on its own when the timeout passes, and every event is \
        written the moment it exists. Close stdin to finish (remaining streaks time \
        out first, unless --no-drain) or send SIGTERM.

        Commands: \(Command.Name.list). \
        Events: indicator, typing, ok, error, state, stats, and member, streak and \
        snapshot in the reply to snapshot. Bad lines get an error \
        event with the line number and a code; nothing else is affected.

        Signals: SIGTERM, SIGINT, SIGHUP, SIGQUIT and the other signals that would \
        end a process (SIGUSR1, SIGUSR2, SIGALRM, ...) end typingd between two lines: \
        it writes what it has produced and exits 0. SIGPIPE and SIGXFSZ are ignored \
        (the failing write reports them).

        Exit status: 0 at the end of input, on a signal and when stdout's reader goes \
        away; 64 for a bad option; 74 for another I/O error (with a message on stderr).

        Golden transcripts: `typingd check [PATH ...]` runs NAME.in.jsonl files and \
        compares their output with NAME.out.jsonl (see `typingd check --help`). To turn \
        a live session into one, run it with --record FILE: the file replays under \
        --clock manual with the same options, byte for byte.

        The full reference is Protocol.md.
        """,
        version: "typingd 2.0.0 (protocol v2)",
        subcommands: [Check.self]
    )

    /// How events are written.
    enum Format: String, CaseIterable, ExpressibleByArgument {
        /// The protocol's JSON, one object per line.
        case json
        /// Lines for people at a terminal.
        case text
    }

    @Option(help: ArgumentHelp(
        "Where time comes from: 'real' (ms since start) or 'manual' (the commands' \"at\").",
        valueName: "real|manual"))
    var clock: SessionConfiguration.Clock = .real

    @Option(name: .customLong("timeout-ms"), parsing: .unconditional, help: ArgumentHelp(
        "Milliseconds after the last keystroke at which typing stops (\(Typingd.describe(EngineConfiguration.timeoutRange))).",
        valueName: "ms"))
    var timeoutMs: Int = EngineConfiguration.defaults.timeout

    @Option(help: ArgumentHelp(
        "Phrases for 3+ typers: 'group' (\"A, B, and 2 others\") or 'compact' (\"A and 3 others\").",
        valueName: "group|compact"))
    var style: EngineConfiguration.Style = EngineConfiguration.defaults.style

    @Option(help: ArgumentHelp(
        "How events are written: 'json' (the protocol) or 'text' (for people: \"12.345  team  bob sees: Alice is typing...\").",
        valueName: "json|text"))
    var format: Format = .json

    @Option(help: ArgumentHelp(
        "With the real clock: also write every input line, as applied, to this file, so that `typingd --clock manual [same options] < FILE` replays the session byte for byte.",
        valueName: "file"))
    var record: String?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Threads that parse input while it floods in, this one included (default: the number of cores; 1: parse and apply on one thread). Only the speed changes.",
        valueName: "n"))
    var threads: Int = Typingd.cores

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "The bytes typingd reads at a time (for testing: a small buffer makes every read a flood, which takes the threaded path).",
        valueName: "bytes", visibility: .hidden))
    var readBuffer = InputReader.defaultCapacity

    /// The processors online, from 1 to ``threadRange``'s upper bound.
    static var cores: Int { Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))).clamped(to: threadRange) }

    /// The values `--threads` may have.
    static let threadRange = 1...64

    @Flag(help: "Also write a 'typing' event whenever a streak starts or stops, with the reason.")
    var typingEvents = EngineConfiguration.defaults.typingEvents

    @Flag(help: "At the end of input, exit at once instead of letting active streaks time out.")
    var noDrain = false

    @Option(help: ArgumentHelp(
        "Who receives indicators: 'members' (every member) or 'open' (members whose view is open).",
        valueName: "members|open"))
    var audience: EngineConfiguration.Audience = EngineConfiguration.defaults.audience

    @Option(help: ArgumentHelp(
        "How typers are listed: 'start' (when their streak began), 'recent' (latest keystroke first) or 'name'. Named typers come first.",
        valueName: "start|recent|name"))
    var order: EngineConfiguration.Order = EngineConfiguration.defaults.order

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "The most user ids an indicator lists; the others are counted in \"more\" (\(Typingd.describe(EngineConfiguration.maxListedRange))).",
        valueName: "n"))
    var maxListed: Int = EngineConfiguration.defaults.maxListed

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "The longest input line in bytes; longer lines get a line_too_long error and are skipped.",
        valueName: "bytes"))
    var maxLineBytes: Int = SessionConfiguration.defaultMaxLineBytes

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "The most members one conversation may have (\(Typingd.describe(EngineConfiguration.limitRange))).",
        valueName: "n"))
    var maxMembers: Int = EngineConfiguration.defaults.maxMembers

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "The most memberships over all conversations (\(Typingd.describe(EngineConfiguration.limitRange))).",
        valueName: "n"))
    var maxMemberships: Int = EngineConfiguration.defaults.maxMemberships

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "The most live conversations, those with members (\(Typingd.describe(EngineConfiguration.limitRange))).",
        valueName: "n"))
    var maxConversations: Int = EngineConfiguration.defaults.maxConversations

    /// Blocks the signals first, so that one arriving while the options are parsed
    /// is kept for the loop instead of killing typingd; then runs as usual.
    static func main() {
        SignalWatcher.install()
        main(nil)
    }

    func validate() throws {
        try Typingd.check("--timeout-ms", timeoutMs, in: EngineConfiguration.timeoutRange)
        try Typingd.check("--max-listed", maxListed, in: EngineConfiguration.maxListedRange)
        try Typingd.check("--threads", threads, in: Typingd.threadRange)
        try Typingd.check("--read-buffer", readBuffer, in: 1...(1 << 24))
        try Typingd.check("--max-line-bytes", maxLineBytes, in: 1...Int.max)
        try Typingd.check("--max-members", maxMembers, in: EngineConfiguration.limitRange)
        try Typingd.check("--max-memberships", maxMemberships, in: EngineConfiguration.limitRange)
        try Typingd.check("--max-conversations", maxConversations, in: EngineConfiguration.limitRange)
        if record != nil && clock != .real {
            throw ValidationError("--record needs --clock real: input for the manual clock already replays itself")
        }
    }

    /// Fails unless `value` of `option` is in `range`.
    static func check(_ option: String, _ value: Int, in range: ClosedRange<Int>) throws {
        guard range.contains(value) else {
            throw ValidationError("\(option) must be \(describe(range)), not \(value)")
        }
    }

    /// "from 1 to 86400000", or "at least 1".
    static func describe(_ range: ClosedRange<Int>) -> String {
        range.upperBound == Int.max ? "at least \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"
    }

    /// The settings the options describe.
    var sessionConfiguration: SessionConfiguration {
        SessionConfiguration(
            engine: EngineConfiguration(timeout: timeoutMs, style: style, typingEvents: typingEvents,
                                        maxMembers: maxMembers, maxMemberships: maxMemberships,
                                        maxConversations: maxConversations, audience: audience, order: order,
                                        maxListed: maxListed),
            clock: clock, maxLineBytes: maxLineBytes, drain: !noDrain)
    }

    func run() throws {
        do throws(IOFailure) {
            try StandardDescriptors.check()
            let signals = try SignalWatcher()
            var loop = EventLoop(configuration: sessionConfiguration)
            loop.threads = threads
            loop.readBuffer = readBuffer
            if let record {
                let fd = open(record, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw .failed(operation: "open the record file \(record)", errno: errno) }
                loop.record = fd
            }
            switch format {
            case .json: try loop.run(format: JSONFormat(), signals: signals)
            case .text: try loop.run(format: TextFormat(), signals: signals)
            }
        } catch {
            guard let message = error.message else { return }
            StandardOutput.diagnose(message)
            throw ExitCode(74)
        }
    }
}

extension SessionConfiguration.Clock: ExpressibleByArgument {}
extension EngineConfiguration.Style: ExpressibleByArgument {}
extension EngineConfiguration.Audience: ExpressibleByArgument {}
extension EngineConfiguration.Order: ExpressibleByArgument {}
