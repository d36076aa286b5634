import CJansson
import CJanssonArena
import TypingCore

/// Decodes one input line into a ``TypingCore/Request``, or the error to report.
///
/// The line goes through jansson (`json_loadb` with `JSON_REJECT_DUPLICATES` and
/// `JSON_DECODE_ANY`), then the fields are checked in the protocol's order (the
/// check order under Protocol.md#commands):
/// `id`, `cmd`, `at`, `conv`, `user`, `thread`, `name`, `empty`, `activity`,
/// `status`, `timeout_ms`, `send_typing`, `receive_typing`, `locale`, `view`, `pane`, `by`,
/// `announce_at`, `announced`.
/// The first failure is the one reported; the id is attached to every error after
/// the id itself was accepted. Each command checks every field it accepts whenever
/// present; fields a command does not accept are ignored, like unknown keys.
@usableFromInline
package struct CommandDecoder: Sendable {
    /// The clock mode, which decides whether `at` and `tick` are allowed.
    package let clock: SessionConfiguration.Clock

    /// Creates a decoder for `clock` mode.
    @usableFromInline
    package init(clock: SessionConfiguration.Clock) {
        self.clock = clock
    }

    /// Makes jansson ready for decoding on several threads at once: its hash seed
    /// is set once, here, instead of lazily by the first object, which is not
    /// thread-safe. Call it before starting threads that decode.
    package static func prepareForThreads() {
        json_object_seed(0)
    }

    /// Makes jansson allocate a decoded line's values from a per-thread arena (see
    /// `CJanssonArena`), process-wide: about 12 % fewer instructions per line. Call
    /// it once, before any thread decodes; outside ``decode(_:number:)`` jansson
    /// keeps using `malloc` and `free`. typingd calls it at start; a program that
    /// embeds TypingProtocol and sets jansson's allocation functions itself does not
    /// (a program outside the package installs it through ``DecoderArena``).
    package static func installArena() {
        cj_arena_install()
    }

    /// Decodes `line` (without LF or trailing CR), which is line `number` of the input.
    @usableFromInline
    package func decode(_ line: UnsafeRawBufferPointer, number: Int) throws(Event.Error) -> Request {
        if let nul = Bytes.firstIndex(of: 0, in: line) {
            throw Event.Error(
                line: number, code: .badJSON,
                message: "invalid JSON: the line holds a NUL byte (byte \(nul + 1)), which JSON text cannot contain")
        }
        guard let base = line.baseAddress else {
            throw Event.Error(line: number, code: .badJSON, message: "invalid JSON: the line is empty")
        }
        var error = json_error_t()
        // The document lives in this thread's arena (once installed) until the
        // json_decref below, which runs before the scope ends.
        cj_arena_begin()
        defer { cj_arena_end() }
        guard
            let root = json_loadb(
                base.assumingMemoryBound(to: CChar.self), line.count,
                cj_decode_flags(), &error)
        else {
            if line.starts(with: Framer.byteOrderMark) {
                throw Event.Error(
                    line: number, code: .badJSON,
                    message:
                        "invalid JSON at column 1: the line starts with a byte order mark (EF BB BF), which is skipped only at the very start of the input",
                    column: 1)
            }
            throw CommandDecoder.report(error, line: number)
        }
        defer { json_decref(root) }
        guard cj_is_object(root) != 0 else {
            throw Event.Error(
                line: number, code: .notObject,
                message:
                    "a command must be a JSON object, like {\"cmd\":\"stats\"}; this line is \(JSONValue.describe(root))"
            )
        }
        return try decodeObject(CommandFields(root), number: number)
    }

    /// Checks the fields of a command object.
    func decodeObject(_ object: CommandFields, number: Int) throws(Event.Error) -> Request {
        let id = try decodeID(object, number: number)
        var fields = FieldReader(line: number, id: id)

        let kind = try fields.command(object.cmd)
        let at = try decodeAt(object.at, &fields, kind: kind)
        // Each command reads only its own fields (the table of commands under
        // Protocol.md#commands), in the protocol's order (see above), and makes its
        // values once every check has passed. Straight-line code per command: checking
        // a set of fields for every command cost the W1 workload (bench/) about 1 % of
        // its instructions.
        switch kind {
        case .join:
            let conv = try fields.identifier("conv", object.conv, for: kind)
            let user = try fields.identifier("user", object.user, for: kind)
            let name = try fields.name(object.name)
            let sendTyping = try fields.flag("send_typing", object.sendTyping)
            let receiveTyping = try fields.flag("receive_typing", object.receiveTyping)
            let locale = try fields.locale(object.locale)
            return Request(
                .join(
                    conv: Identifier(bytes: conv), user: Identifier(bytes: user),
                    name: name.map { String(decoding: $0, as: UTF8.self) }, sendTyping: sendTyping,
                    locale: locale.map { String(decoding: $0, as: UTF8.self) }, receiveTyping: receiveTyping),
                id: id, at: at, line: number)
        case .type:
            let conv = try fields.identifier("conv", object.conv, for: kind)
            let user = try fields.identifier("user", object.user, for: kind)
            let thread = try fields.optionalIdentifier("thread", object.thread)
            let empty = try fields.flag("empty", object.empty) ?? false
            let activity = try fields.activity(object.activity) ?? .typing
            let status = try fields.status(object.status, activity: activity)
            let timeout = try fields.timeout(object.timeoutMs)
            return Request(
                .type(
                    conv: Identifier(bytes: conv), user: Identifier(bytes: user),
                    thread: thread.map { Identifier(bytes: $0) },
                    status: status.map { String(decoding: $0, as: UTF8.self) }, timeout: timeout,
                    activity: activity, empty: empty),
                id: id, at: at, line: number)
        case .send:
            let conv = try fields.identifier("conv", object.conv, for: kind)
            let user = try fields.identifier("user", object.user, for: kind)
            let thread = try fields.optionalIdentifier("thread", object.thread)
            return Request(
                .send(
                    conv: Identifier(bytes: conv), user: Identifier(bytes: user),
                    thread: thread.map { Identifier(bytes: $0) }),
                id: id, at: at, line: number)
        case .leave, .close, .forget:
            let conv = Identifier(bytes: try fields.identifier("conv", object.conv, for: kind))
            let user = Identifier(bytes: try fields.identifier("user", object.user, for: kind))
            let command: Command =
                switch kind {
                case .leave: .leave(conv: conv, user: user)
                case .close: .close(conv: conv, user: user, pane: try fields.pane(object.pane) ?? .main)
                default: .forget(conv: conv, user: user)
                }
            return Request(command, id: id, at: at, line: number)
        case .restore:
            let conv = try fields.identifier("conv", object.conv, for: kind)
            let user = try fields.identifier("user", object.user, for: kind)
            let pane = try fields.pane(object.pane) ?? .main
            let announceAt = try fields.announceAt(object.announceAt)
            let announced = try fields.announced(object.announced)
            return Request(
                .restore(
                    conv: Identifier(bytes: conv), user: Identifier(bytes: user), pane: pane,
                    announceAt: announceAt,
                    announced: announced.flatMap { $0.isEmpty ? nil : String(decoding: $0, as: UTF8.self) }),
                id: id, at: at, line: number)
        case .remove:
            let conv = try fields.identifier("conv", object.conv, for: kind)
            let user = try fields.identifier("user", object.user, for: kind)
            let by = try fields.optionalIdentifier("by", object.by)
            return Request(
                .remove(
                    conv: Identifier(bytes: conv), user: Identifier(bytes: user),
                    by: by.map { Identifier(bytes: $0) }),
                id: id, at: at, line: number)
        case .offline:
            let user = try fields.identifier("user", object.user, for: kind)
            return Request(
                .offline(user: Identifier(bytes: user)),
                id: id, at: at, line: number)
        case .open:
            let conv = try fields.identifier("conv", object.conv, for: kind)
            let user = try fields.identifier("user", object.user, for: kind)
            let thread = try fields.optionalIdentifier("thread", object.thread)
            let view = try fields.view(object.view) ?? .chat
            if view == .list && thread != nil {
                // The field is view's (checked first), but a side pane's open says what it needs.
                let side = (try? fields.pane(object.pane)) == .side
                throw fields.failure(
                    .badField, field: "view",
                    side
                        ? "a side pane shows a thread and a list view has none: open with \"pane\":\"side\" takes a \"thread\" and no \"view\":\"list\""
                        : "a list view is always at the main timeline: open with \"view\":\"list\" takes no \"thread\"")
            }
            let pane = try fields.pane(object.pane) ?? .main
            if pane == .side && thread == nil {
                throw fields.failure(
                    .badField, field: "pane",
                    view == .list
                        ? "a side pane shows a thread, and a list view has none: open with \"pane\":\"side\" takes a \"thread\" and no \"view\":\"list\""
                        : "a side pane shows a thread: open with \"pane\":\"side\" needs \"thread\"")
            }
            return Request(
                .open(
                    conv: Identifier(bytes: conv), user: Identifier(bytes: user),
                    thread: thread.map { Identifier(bytes: $0) }, view: view, pane: pane),
                id: id, at: at, line: number)
        case .user:
            let user = try fields.identifier("user", object.user, for: kind)
            let name = try fields.name(object.name)
            let sendTyping = try fields.flag("send_typing", object.sendTyping)
            let receiveTyping = try fields.flag("receive_typing", object.receiveTyping)
            let locale = try fields.locale(object.locale)
            return Request(
                .user(
                    user: Identifier(bytes: user), name: name.map { String(decoding: $0, as: UTF8.self) },
                    sendTyping: sendTyping, locale: locale.map { String(decoding: $0, as: UTF8.self) },
                    receiveTyping: receiveTyping),
                id: id, at: at, line: number)
        case .query:
            let conv = try fields.identifier("conv", object.conv, for: kind)
            let thread = try fields.optionalIdentifier("thread", object.thread)
            return Request(
                .query(conv: Identifier(bytes: conv), thread: thread.map { Identifier(bytes: $0) }),
                id: id, at: at, line: number)
        case .tick: return Request(.tick, id: id, at: at, line: number)
        case .stats: return Request(.stats, id: id, at: at, line: number)
        case .snapshot: return Request(.snapshot, id: id, at: at, line: number)
        }
    }

    /// The `id`: a string of at most 256 bytes or an integer within ±(2^53 − 1).
    /// A bad id is reported without an id.
    @inline(never)
    func decodeID(_ object: CommandFields, number: Int) throws(Event.Error) -> Request.ID? {
        guard let value = object.id else { return nil }
        if cj_is_string(value) != 0 {
            let bytes = JSONValue.bytes(ofString: value)
            if bytes.count <= FieldLimits.maxIdentifierBytes {
                return .string(String(decoding: bytes, as: UTF8.self))
            }
            throw Event.Error(
                line: number, code: .badField,
                message:
                    "\"id\" is \(bytes.count) bytes long; a string id may have at most \(FieldLimits.maxIdentifierBytes)",
                field: "id")
        }
        if cj_is_integer(value) != 0 {
            let integer = json_integer_value(value)
            if integer >= -Int64(Engine.maxTime) && integer <= Int64(Engine.maxTime) {
                return .integer(Int(integer))
            }
            throw Event.Error(
                line: number, code: .badField,
                message: "\"id\" \(integer) is out of range; an integer id must be within ±\(Engine.maxTime)",
                field: "id")
        }
        throw Event.Error(
            line: number, code: .badField,
            message:
                "\"id\" must be a string of at most \(FieldLimits.maxIdentifierBytes) bytes or an integer, not \(JSONValue.describe(value))",
            field: "id")
    }

    /// The `at`: allowed only with the manual clock, required by `tick`.
    @inline(never)
    func decodeAt(_ value: CommandFields.Value?, _ fields: inout FieldReader, kind: Command.Name) throws(Event.Error)
        -> Int?
    {
        if clock == .real {
            if value != nil {
                throw fields.failure(
                    .clockMode, field: "at",
                    "\"at\" is only for --clock manual; with the real clock, a command happens when it is read")
            }
            if kind == .tick {
                throw fields.failure(
                    .clockMode, field: "cmd",
                    "tick is only for --clock manual; the real clock advances by itself")
            }
            return nil
        }
        guard let value else {
            if kind == .tick {
                throw fields.failure(
                    .missingField, field: "at",
                    "tick needs \"at\", the time in milliseconds to move the clock to")
            }
            return nil
        }
        if cj_is_integer(value) != 0 {
            let integer = json_integer_value(value)
            if integer >= 0 && integer <= Int64(Engine.maxTime) { return Int(integer) }
            throw fields.failure(
                .badField, field: "at",
                "\"at\" must be from 0 to \(Engine.maxTime) milliseconds, not \(integer)")
        }
        throw fields.failure(
            .badField, field: "at",
            "\"at\" must be an integer number of milliseconds, not \(JSONValue.describe(value))")
    }

    /// The error event for a line jansson rejected, with its text and column.
    static func report(_ error: json_error_t, line: Int) -> Event.Error {
        var error = error
        let code = json_error_code(&error)
        var text = withUnsafeBytes(of: &error.text) { raw -> String in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
        if code == json_error_null_character {
            text =
                "strings must not contain \\u0000"
                + (text.firstRange(of: " near ").map { String(text[$0.lowerBound...]) } ?? "")
        }
        let column = Int(error.column)
        let place = column > 0 ? " at column \(column)" : ""
        return Event.Error(
            line: line, code: .badJSON, message: "invalid JSON\(place): \(text)",
            column: column > 0 ? column : nil)
    }
}

extension Command.Name {
    /// Each name packed into a little-endian integer with its length: every name
    /// fits in eight bytes, so finding one is a few integer comparisons.
    private static let packed: [(word: UInt64, count: Int, name: Command.Name)] = allCases.map { name in
        let bytes = Array(name.rawValue.utf8)
        precondition(bytes.count <= 8, "command names must fit in eight bytes")
        var word: UInt64 = 0
        for (index, byte) in bytes.enumerated() { word |= UInt64(byte) << (8 * index) }
        return (word, bytes.count, name)
    }

    /// Finds the command named by the UTF-8 bytes of a `cmd` string.
    init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= 8 else { return nil }
        var word: UInt64 = 0
        for index in 0..<bytes.count { word |= UInt64(bytes[index]) << (8 * index) }
        guard let entry = Command.Name.packed.first(where: { $0.word == word && $0.count == bytes.count }) else {
            return nil
        }
        self = entry.name
    }
}

/// The per-thread arena jansson's values come from while a line is decoded, for a
/// program outside this package that decodes as typingd does.
public enum DecoderArena {
    /// Installs the per-thread arena, process-wide; call it once, before any thread decodes.
    public static func install() {
        CommandDecoder.installArena()
    }
}
