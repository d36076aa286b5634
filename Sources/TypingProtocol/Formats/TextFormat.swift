import TypingCore

/// Events as lines for people at a terminal (`--format text`):
///
/// ```
/// 12.345  team  bob sees: Alice is typing...
/// 12.345  team  alice started typing
/// 12.345  team (thread t1)  bob sees in the chat list: Alice is recording audio...
/// 12.345  g  v sees: Ana, Ben, and Cleo are typing... (typing lists 2 of 3)
/// 12.345  ok line 3 (id 7)
/// 12.345  error line 4 bad_json: invalid JSON at column 3: ...
/// ```
///
/// Every line starts with its time: seconds since the clock's zero, with
/// milliseconds (for `ok` and `error`, which have no `at` in JSON, the time the line
/// was applied or refused at). An indicator whose `typing` stops at `--max-listed`
/// says how many typers it does not list (its `more`). Every string from
/// input (ids, names, phrases, error messages, which quote what a line held) is
/// written as it is, but for the characters a terminal would act on, a line
/// splitter would break at, or that would reorder the rest of a line (see
/// `isUnsafe(_:)`), which are written as `\u{…}`; an id that holds white space, a
/// quote or such a character is quoted. So the only control character written is the
/// LF that ends each event's one line. Not meant to be parsed: programs read JSON.
public struct TextFormat: EventFormat {
    /// A text format.
    public init() {}

    public mutating func encode(_ event: Event, into out: inout OutputBuffer) {
        switch event {
        case .indicator(let indicator):
            TextFormat.time(indicator.at, into: &out)
            TextFormat.place(indicator.conv, indicator.thread, into: &out)
            out.append("  ")
            TextFormat.id(indicator.viewer, into: &out)
            out.append(
                indicator.screen == .list
                    ? " sees in the chat list: "
                    : indicator.pane == .side ? " sees in the side pane: " : " sees: ")
            if indicator.view.typerCount == 0 {
                out.append("(nobody is typing)")
            } else {
                indicator.view.withTextBytes { TextFormat.text($0, into: &out) }
            }
            if indicator.view.more > 0 {
                // JSON's `more`: the typers its `typing` ids leave out (--max-listed),
                // which the text may still name; said as what the ids list.
                out.append(" (typing lists ")
                out.appendDecimal(indicator.view.typerCount - indicator.view.more)
                out.append(" of ")
                out.appendDecimal(indicator.view.typerCount)
                out.append(")")
            }
        case .announce(let announce):
            TextFormat.time(announce.at, into: &out)
            TextFormat.place(announce.conv, announce.thread, into: &out)
            out.append("  ")
            TextFormat.id(announce.viewer, into: &out)
            out.append(
                announce.screen == .list
                    ? " hears from the chat list: "
                    : announce.pane == .side ? " hears from the side pane: " : " hears: ")
            TextFormat.text(announce.text, into: &out)
        case .typing(let change):
            TextFormat.time(change.at, into: &out)
            TextFormat.place(change.conv, change.thread, into: &out)
            out.append("  ")
            TextFormat.id(change.user, into: &out)
            switch change.state {
            case .started:
                out.append(" started typing")
                if let activity = change.activity {
                    out.append(" (")
                    out.append(contentsOf: activity.name)
                    TextFormat.status(change.status, into: &out)
                    out.append(")")
                }
            case .changed:
                out.append(" is now ")
                out.append(contentsOf: (change.activity ?? .typing).name)
                TextFormat.status(change.status, into: &out)
            case .stopped:
                out.append(" stopped typing (")
                out.append(contentsOf: change.reason?.rawValue ?? "")
                out.append(")")
            }
        case .ok(let ok):
            TextFormat.time(ok.at, into: &out)
            out.append("ok line ")
            out.appendDecimal(ok.line)
            TextFormat.requestID(ok.id, into: &out)
        case .error(let error):
            TextFormat.time(error.at, into: &out)
            out.append("error line ")
            out.appendDecimal(error.line)
            if let id = error.id { TextFormat.requestID(id, into: &out) }
            out.append(" ")
            out.append(contentsOf: error.code.rawValue)
            out.append(": ")
            TextFormat.text(error.message, into: &out)
        case .state(let state):
            TextFormat.time(state.at, into: &out)
            TextFormat.place(state.conv, state.thread, into: &out)
            for (label, ids) in [("  members: ", state.members), ("; open: ", state.open), ("; typing: ", state.typing)]
            {
                out.append(contentsOf: label)
                if ids.isEmpty { out.append("-") }
                for (index, id) in ids.enumerated() {
                    if index > 0 { out.append(", ") }
                    TextFormat.id(id, into: &out)
                    if label == "; typing: ", let activities = state.activities, index < activities.count,
                        activities[index] != .typing
                    {
                        out.append(" (")
                        out.append(contentsOf: activities[index].name)
                        out.append(")")
                    }
                }
            }
            if let id = state.id { TextFormat.requestID(id, into: &out) }
        case .stats(let stats):
            TextFormat.time(stats.at, into: &out)
            out.append("stats: lines ")
            out.appendDecimal(stats.lines)
            for (label, value) in [
                (", commands ", stats.commands), (", errors ", stats.errors),
                (", conversations ", stats.conversations), (", members ", stats.members),
                (", typing ", stats.typing), (", events ", stats.events)
            ] {
                out.append(contentsOf: label)
                out.appendDecimal(value)
            }
            if let id = stats.id { TextFormat.requestID(id, into: &out) }
        case .member(let member):
            TextFormat.time(member.at, into: &out)
            TextFormat.id(member.conv, into: &out)
            out.append("  member ")
            TextFormat.id(member.user, into: &out)
            if let name = member.name {
                out.append(" (")
                TextFormat.text(name, into: &out)
                out.append(")")
            }
            if let locale = member.locale {
                out.append(", locale ")
                TextFormat.text(locale, into: &out)
            }
            if !member.sendTyping { out.append(", typing hidden") }
            if !member.receiveTyping { out.append(", sees no typing") }
            if member.open {
                out.append(member.view == .list ? ", open in the chat list" : ", view open")
                if let thread = member.thread {
                    out.append(" at thread ")
                    TextFormat.id(thread, into: &out)
                }
            }
            if member.forgotten { out.append(", indicator forgotten") }
            if let side = member.side {
                out.append(", side pane at thread ")
                TextFormat.id(side, into: &out)
            }
            if let joined = member.joined {
                out.append(" (joined ")
                out.appendDecimal(joined)
                out.append(")")
            }
            TextFormat.announcement(member.announcement, of: ", screen", into: &out)
            TextFormat.announcement(member.sideAnnouncement, of: ", side pane", into: &out)
        case .streak(let streak):
            TextFormat.time(streak.at, into: &out)
            TextFormat.place(streak.conv, streak.thread, into: &out)
            out.append("  streak ")
            TextFormat.id(streak.user, into: &out)
            if streak.activity != .typing {
                out.append(" ")
                out.append(contentsOf: streak.activity.name)
                TextFormat.status(streak.status, into: &out)
            }
            out.append(" until ")
            TextFormat.seconds(streak.deadline, into: &out)
            out.append(" (keystroke ")
            out.appendDecimal(streak.keystroke)
            if let started = streak.started {
                out.append(", started ")
                out.appendDecimal(started)
            }
            out.append(")")
        case .snapshot(let snapshot):
            TextFormat.time(snapshot.at, into: &out)
            out.append("snapshot: ")
            TextFormat.count(snapshot.members, "member", "members", into: &out)
            out.append(" in ")
            TextFormat.count(snapshot.conversations, "conversation", "conversations", into: &out)
            out.append(", ")
            out.appendDecimal(snapshot.typing)
            out.append(" typing")
            if let id = snapshot.id { TextFormat.requestID(id, into: &out) }
        }
        out.append(UInt8(ascii: "\n"))
    }

    /// `1 member`, `2 members`: every count written in words goes through here.
    static func count(_ value: Int, _ one: String, _ other: String, into out: inout OutputBuffer) {
        out.appendDecimal(value)
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: value == 1 ? one : other)
    }

    /// `team`, or `team (thread t1)`.
    static func place(_ conv: Identifier, _ thread: Identifier?, into out: inout OutputBuffer) {
        id(conv, into: &out)
        if let thread {
            out.append(" (thread ")
            id(thread, into: &out)
            out.append(")")
        }
    }

    /// `12.345  ` (seconds with milliseconds, then two spaces).
    static func time(_ at: Int, into out: inout OutputBuffer) {
        seconds(at, into: &out)
        out.append("  ")
    }

    /// `12.345` (seconds with milliseconds).
    static func seconds(_ at: Int, into out: inout OutputBuffer) {
        out.appendDecimal(at / 1000)
        out.append(UInt8(ascii: "."))
        let millis = at % 1000
        if millis < 100 { out.append(UInt8(ascii: "0")) }
        if millis < 10 { out.append(UInt8(ascii: "0")) }
        out.appendDecimal(millis)
    }

    /// ` (id 7)` or ` (id "k")`.
    static func requestID(_ id: Request.ID, into out: inout OutputBuffer) {
        out.append(" (id ")
        switch id {
        case .integer(let value):
            out.appendDecimal(value)
        case .string(let text):
            var text = text
            text.withUTF8 { quoted(UnsafeRawBufferPointer($0), into: &out) }
        }
        out.append(UInt8(ascii: ")"))
    }

    /// An id, as is when that is safe and unambiguous, else quoted.
    static func id(_ id: Identifier, into out: inout OutputBuffer) {
        id.withUnsafeBytes { bytes in
            if bytes.contains(where: { $0 <= 0x20 || $0 == 0x22 || $0 == 0x27 || $0 == 0x5C }) || !isPlain(bytes) {
                quoted(bytes, into: &out)
            } else {
                out.append(bytes)
            }
        }
    }

    /// ` "words"`: a streak's status words, quoted (they are user text, and may
    /// hold anything but control characters: Protocol.md#status-in-ones-own-words);
    /// nothing for none.
    static func status(_ words: String?, into out: inout OutputBuffer) {
        guard var words else { return }
        out.append(UInt8(ascii: " "))
        words.withUTF8 { quoted(UnsafeRawBufferPointer($0), into: &out) }
    }

    /// A screen's announcement state in a `member` line: `, screen announces at 2.400
    /// (rank 1)` and `, screen announced "Ben is typing..."`, each when it applies.
    static func announcement(_ state: Event.Member.Announcement, of screen: StaticString, into out: inout OutputBuffer)
    {
        if let due = state.due {
            out.append(screen)
            out.append(" announces at ")
            seconds(due, into: &out)
            out.append(" (rank ")
            out.appendDecimal(state.rank ?? 0)
            out.append(")")
        }
        if var text = state.announced {
            out.append(screen)
            out.append(" announced ")
            text.withUTF8 { quoted(UnsafeRawBufferPointer($0), into: &out) }
        }
    }

    /// `"text"`, with `"` and `\` escaped and unsafe characters as `\u{…}`.
    static func quoted(_ bytes: UnsafeRawBufferPointer, into out: inout OutputBuffer) {
        out.append(UInt8(ascii: "\""))
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            if scalar == "\"" || scalar == "\\" { out.append(UInt8(ascii: "\\")) }
            appendScalar(scalar, into: &out)
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Text (a phrase, a name, a message): as is, but for unsafe characters.
    static func text(_ bytes: UnsafeRawBufferPointer, into out: inout OutputBuffer) {
        guard !isPlain(bytes) else { return out.append(bytes) }
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars { appendScalar(scalar, into: &out) }
    }

    /// Text from a `String`.
    static func text(_ string: String, into out: inout OutputBuffer) {
        var string = string
        string.withUTF8 { text(UnsafeRawBufferPointer($0), into: &out) }
    }

    /// `text` for a terminal, its line breaks kept: each line as ``text(_:into:)``
    /// writes it. For what typingd prints for people besides events (stderr, the
    /// reports of `check`), from file names, expected files or arguments.
    package static func terminalSafe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 != "\n" && isUnsafe($0) }) else { return text }
        var out = OutputBuffer()
        // By scalars: as Characters, "\r\n" is one, which is not "\n", and the line
        // break would be escaped with its CR.
        for (index, line) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if index > 0 { out.append(UInt8(ascii: "\n")) }
            self.text(String(String.UnicodeScalarView(line)), into: &out)
        }
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// A file's path (or any name made of bytes) for a line a person reads, on
    /// stderr or in `check`'s report: as ``text(_:into:)`` writes text, every unsafe
    /// character as `\u{…}`, line breaks included, so that a path is always one
    /// line; and each byte that is not part of valid UTF-8 as `\xFF`
    /// (``invalidByte(_:)``), so that a name that is not UTF-8 is shown as it is,
    /// not as U+FFFD.
    package static func path<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        let bytes = Array(bytes)
        var out = OutputBuffer()
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var position = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                appendScalar(Unicode.UTF8.decode(encoded), into: &out)
                position += encoded.count
            case .error(let length):
                for byte in bytes[position..<min(position + length, bytes.count)] {
                    out.append(contentsOf: invalidByte(byte))
                }
                position += length
            case .emptyInput:
                return String(decoding: out.bytes, as: UTF8.self)
            }
        }
    }

    /// ``path(_:)`` for a path held as a `String`.
    package static func path(_ path: String) -> String {
        self.path(path.utf8)
    }

    /// A byte that is not part of valid UTF-8, as people are shown it: `\xFF`.
    package static func invalidByte(_ byte: UInt8) -> String {
        "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
    }

    /// True when every byte is printable ASCII: nothing to escape (the common case).
    static func isPlain(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    /// True for the characters text output never writes as they are: C0 controls
    /// (U+0000–U+001F), DEL and C1 controls (U+007F–U+009F), the line and paragraph
    /// separators (U+2028, U+2029), and the bidirectional controls, which reorder the
    /// rest of a line on a terminal (U+061C, U+200E, U+200F, U+202A–U+202E,
    /// U+2066–U+2069).
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
            return true
        default:
            return false
        }
    }

    /// One scalar, as `\u{…}` when it is unsafe.
    static func appendScalar(_ scalar: Unicode.Scalar, into out: inout OutputBuffer) {
        if isUnsafe(scalar) {
            out.append("\\u{")
            out.append(contentsOf: String(scalar.value, radix: 16))
            out.append(UInt8(ascii: "}"))
        } else {
            out.append(contentsOf: String(scalar))
        }
    }
}
