import TypingdOptions
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
package struct Typingd: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "typingd",
        abstract: "Typing indicators for chat: JSON commands in on stdin, indicator events out on stdout.",
        usage: """
            typingd [<options>] < commands.jsonl > events.jsonl
              typingd check [<path> ...] [--bless] [--junit <file>]
              typingd replay <record>
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
            follows the people watching, not the member count. "open" with "thread" shows a \
            thread (typing there shows there, not in the channel); with "view":"list" it is \
            the conversation's row in the chat list, phrased with --list-style.

            Activities: a keystroke may say what its typer is doing ("activity": \
            \(Activity.list)): "Ana is typing; Ben is recording audio...". With \
            "status", the keystroke's "status" holds the typer's own words: "Claude is thinking...".

            Languages: each user reads their indicator in their "locale"'s table. English is \
            built in; --phrases PATH loads more (the project ships de, es, fr, pt, ru, ar, \
            ja and zh: phrases/ in the source, share/typingd/phrases installed), --default-locale names the table of \
            users who give none. A user with "receive_typing": false gets no indicators.

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
            Events: indicator, announce (with --announce-after-ms), typing, ok, error, \
            state, stats, and member, streak and snapshot in the reply to snapshot. open \
            and close take "pane":"side" for a thread shown in a side pane beside the \
            main screen; its indicators carry "pane":"side". Bad lines get an error \
            event with the line number and a code; nothing else is affected. A bad \
            option, phrase table or locale stops typingd at start with exit 64.

            Signals: SIGTERM, SIGINT, SIGHUP, SIGQUIT and the other signals that would \
            end a process (SIGUSR1, SIGUSR2, SIGALRM, ...) end typingd between two lines: \
            it writes what it has produced and exits 0. SIGPIPE and SIGXFSZ are ignored \
            (the failing write reports them), and SIGPROF (left to the crash handler).

            Exit status: 0 at the end of input, on a signal and when stdout's reader goes \
            away; 64 for a bad option, phrase table or locale; 74 for another I/O error (with a \
            message on stderr).

            Golden transcripts: `typingd check [PATH ...]` runs NAME.in.jsonl files and \
            compares their output with NAME.out.jsonl (see `typingd check --help`). To turn \
            a live session into one, run it with --record FILE: `typingd replay FILE` \
            writes its output again, byte for byte (of a session that was killed, as by \
            SIGKILL, only up to its last recorded line), with the options it was recorded with, \
            and `typingd check` takes the record as a transcript's input.

            The full reference is Protocol.md (in the source; installed as share/doc/typingd/Protocol.md).
            """,
        version: "typingd 4.0.0 (protocol v4)",
        subcommands: [Check.self, Replay.self]
    )

    @OptionGroup(title: "Session options")
    var options: SessionOptions

    @Option(
        help: ArgumentHelp(
            "With the real clock: also write a record of the input to this file: every line with the time it was applied at, and how the session ended, so that `typingd replay FILE` writes the same output again, byte for byte (of a session that was killed, as by SIGKILL, only up to its last recorded line).",
            valueName: "file"))
    var record: String?

    @OptionGroup(title: "Parsing threads (speed only, not conversation threads)")
    var threading: ThreadOptions

    /// For install.sh: write the manual pages into this folder, and nothing else.
    @Option(name: .customLong("generate-manual"), help: ArgumentHelp(valueName: "folder", visibility: .private))
    var manualFolder: String?

    /// Blocks the signals first, so that one arriving while the options are parsed
    /// is kept for the loop instead of killing typingd; then runs as usual.
    static func main() {
        SignalWatcher.install()
        CommandDecoder.installArena()
        if let (position, bytes) = ArgumentBytes.firstInvalid() {
            StandardOutput.diagnose("typingd: " + ArgumentBytes.message(position: position, bytes: bytes))
            Glibc.exit(ExitCode.validationFailure.rawValue)
        }
        do {
            var command = try parseAsRoot()
            if !(command is Typingd || command is Check || command is Replay) { // ArgumentParser's `help`
                try checkHelpPath(CommandLine.arguments.dropFirst())
            }
            if command is Check || command is Replay,
                let given = ManualPages.sessionOptionGiven(to: type(of: command), in: CommandLine.arguments.dropFirst())
            {
                let name = type(of: command)._commandName
                let reason =
                    name == "replay"
                    ? "a replay takes the session's options from the record's header"
                    : "check runs each transcript with the options in its NAME.args or its record's header"
                StandardOutput.diagnose(
                    "typingd \(name): \(given) is a session option, and \(reason) (see 'typingd \(name) --help')")
                Glibc.exit(ExitCode.validationFailure.rawValue)
            }
            try command.run()
        } catch {
            // What ArgumentParser's own main does, except that a message for stderr
            // goes through diagnose: it is terminal-safe, whatever an argument held
            // (`--bogus$'\e[31m'` is echoed as `\u{1b}`).
            let code = exitCode(for: error)
            var message = argumentsEscaped(in: fullMessage(for: error))
            if code != .success, let hint = subcommandHint(CommandLine.arguments.dropFirst()),
                let end = message.firstIndex(of: "\n")
            {
                message.insert(contentsOf: ". " + hint, at: end)
            }
            if !message.isEmpty {
                if code == .success { print(message) } else { StandardOutput.diagnose(message) }
            }
            Glibc.exit(code.rawValue)
        }
    }

    /// `message` with every argument (or `--option=` value) that holds a line break
    /// shown as a path is (`\u{a}`): diagnose keeps the message's own line breaks,
    /// and an argument's must not forge a line of its own.
    static func argumentsEscaped(in message: String) -> String {
        var message = message
        for argument in CommandLine.arguments.dropFirst() where argument.contains(where: \.isNewline) {
            var pieces = [argument]
            if argument.hasPrefix("-"), let equals = argument.firstIndex(of: "=") {
                pieces.append(String(argument[argument.index(after: equals)...]))
            }
            for piece in pieces where piece.contains(where: \.isNewline) {
                message = message.replacing(piece, with: TextFormat.path(piece))
            }
        }
        return message
    }

    /// "Did you mean 'typingd check'?" when the first argument is not an option and
    /// is a subcommand's name mistyped (at most two edits away; typingd itself takes
    /// no arguments, so ArgumentParser only says they were unexpected).
    static func subcommandHint(_ arguments: ArraySlice<String>) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        let names = (configuration.subcommands.map { $0._commandName }) + ["help"]
        guard !names.contains(first),
            let near = names.first(where: { editDistance(Array(first.utf8), Array($0.utf8)) <= 2 })
        else { return nil }
        return "Did you mean 'typingd \(near)'?"
    }

    /// Levenshtein's distance between two byte strings (short ones: a name typed).
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard a.count <= 64 && b.count <= 64 else { return .max }
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// `typingd help NAME...` names subcommands: ArgumentParser shows the root's help,
    /// exit 0, for a name it does not know, so that `typingd help chek` looked like an
    /// answer. A name that is not a subcommand (of the one before it) is a usage error;
    /// `help` is a command without subcommands, so `typingd help help` is its page.
    /// Run once ArgumentParser has parsed the arguments as its help command. Options
    /// may come before `help`, and one may take the value "help" (`--phrases help`):
    /// the command is the first `help` that what precedes it parses as the root's
    /// options.
    static func checkHelpPath(_ arguments: ArraySlice<String>) throws {
        let all = Array(arguments)
        guard
            let start = all.indices.first(where: { index in
                all[index] == "help" && (try? Typingd.parse(Array(all[..<index]))) != nil
            })
        else { return }
        var subcommands: [any ParsableCommand.Type]? = configuration.subcommands
        var path = "typingd"
        for name in all[(start + 1)...] where !name.hasPrefix("-") {
            let known = subcommands ?? []
            guard let next = known.first(where: { $0._commandName == name }) else {
                if name == "help" && path == "typingd" { // `typingd help help`: help's own page
                    subcommands = nil
                    path += " help"
                    continue
                }
                throw ValidationError(
                    "'\(name)' is not a subcommand of \(path)"
                        + (known.isEmpty
                            ? " (it has none)"
                            : " (its subcommands: \(known.map { $0._commandName }.joined(separator: ", ")))"))
            }
            subcommands = next.configuration.subcommands
            path += " " + name
        }
    }

    package init() {}

    package func validate() throws {
        if record != nil && options.clock != .real {
            throw ValidationError("--record needs --clock real: input for the manual clock already replays itself")
        }
    }

    package func run() throws {
        if let manualFolder {
            do {
                try ManualPages.write(to: manualFolder)
            } catch {
                StandardOutput.diagnose("typingd --generate-manual: \(error)")
                throw ExitCode(74)
            }
            return
        }
        let configuration: SessionConfiguration
        var recordHeader: RecordHeader?
        do {
            let tables = try options.loadTables(relativeTo: nil)
            configuration = try options.configuration(tables: tables.map(\.table))
            if record != nil { recordHeader = options.recordHeader(tables: tables) }
        } catch {
            StandardOutput.diagnose("typingd: \(error)")
            throw ExitCode(64)
        }
        do throws(IOFailure) {
            try StandardDescriptors.check()
            let signals = try SignalWatcher()
            var loop = EventLoop(configuration: configuration)
            loop.threads = threading.threads
            loop.readBuffer = threading.readBuffer
            if let record, let recordHeader {
                let fd = open(record, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                guard fd >= 0 else {
                    let error = errno
                    throw .failed(operation: "open the record file \(TextFormat.path(record))", errno: error)
                }
                loop.record = (fd, recordHeader)
            }
            switch options.format {
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
