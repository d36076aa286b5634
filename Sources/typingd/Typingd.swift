import ArgumentParser
import Glibc
import TypingCore
import TypingProtocol

/// The `typingd` command: options, then the event loop.
@main
struct Typingd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "typingd",
        abstract: "Typing indicators for chat: JSON commands in on stdin, indicator events out on stdout.",
        discussion: """
        typingd reads one JSON command per line on stdin and keeps, per conversation, \
        who is a member and who is typing. On stdout it writes one JSON event per line, \
        above all the indicator each member should see ("Alice and Bob are typing..."). \
        Typing ends 3 s after the last keystroke, at once on send, on an emptied input \
        box, on leave, removal or going offline. Nobody sees their own typing.

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

        Commands: join, type, send, leave, remove, offline, tick, query, stats. \
        Events: indicator, typing, ok, error, state, stats. Bad lines get an error \
        event with the line number and a code; nothing else is affected.

        Exit status: 0 at the end of input, on SIGINT/SIGTERM and when stdout's \
        reader goes away; 64 for a bad option; 74 for another I/O error.
        The full reference is Protocol.md.
        """,
        version: "typingd 1.0.0 (protocol v1)"
    )

    @Option(help: ArgumentHelp(
        "Where time comes from: 'real' (ms since start) or 'manual' (the commands' \"at\").",
        valueName: "real|manual"))
    var clock: ClockMode = .real

    @Option(name: .customLong("timeout-ms"), help: ArgumentHelp(
        "Milliseconds after the last keystroke at which typing stops (1 … 86400000).",
        valueName: "ms"))
    var timeoutMs: Int = 3000

    @Option(help: ArgumentHelp(
        "Phrases for 3+ typers: 'group' (\"A, B, and 2 others\") or 'compact' (\"A and 3 others\").",
        valueName: "group|compact"))
    var style: PhraseStyle = .group

    @Flag(help: "Also write a 'typing' event whenever a streak starts or stops, with the reason.")
    var typingEvents = false

    @Flag(help: "At the end of input, exit at once instead of letting active streaks time out.")
    var noDrain = false

    @Option(help: ArgumentHelp(
        "The longest input line in bytes; longer lines get a line_too_long error and are skipped.",
        valueName: "bytes"))
    var maxLineBytes: Int = SessionConfiguration.defaultMaxLineBytes

    @Option(help: ArgumentHelp("The most members one conversation may have.", valueName: "n"))
    var maxMembers: Int = 100_000

    @Option(help: ArgumentHelp("The most memberships over all conversations.", valueName: "n"))
    var maxMemberships: Int = 10_000_000

    @Option(help: ArgumentHelp("The most live conversations (those with members).", valueName: "n"))
    var maxConversations: Int = 10_000_000

    func validate() throws {
        guard (1...EngineConfiguration.maxTimeout).contains(timeoutMs) else {
            throw ValidationError("--timeout-ms must be from 1 to \(EngineConfiguration.maxTimeout), not \(timeoutMs)")
        }
        guard maxLineBytes >= 1 else {
            throw ValidationError("--max-line-bytes must be at least 1, not \(maxLineBytes)")
        }
        guard maxMembers >= 1 else {
            throw ValidationError("--max-members must be at least 1, not \(maxMembers)")
        }
        guard maxMemberships >= 1 else {
            throw ValidationError("--max-memberships must be at least 1, not \(maxMemberships)")
        }
        guard maxConversations >= 1 else {
            throw ValidationError("--max-conversations must be at least 1, not \(maxConversations)")
        }
    }

    /// The settings the options describe.
    var sessionConfiguration: SessionConfiguration {
        SessionConfiguration(
            engine: EngineConfiguration(timeout: timeoutMs, style: style, typingEvents: typingEvents,
                                        maxMembers: maxMembers, maxMemberships: maxMemberships,
                                        maxConversations: maxConversations),
            clock: clock, maxLineBytes: maxLineBytes, drain: !noDrain)
    }

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        do {
            try StandardDescriptors.check()
            try EventLoop(configuration: sessionConfiguration).run()
        } catch .readerGone {
            return
        } catch {
            OutputWriter.diagnose(error.message)
            throw ExitCode(74)
        }
    }
}
