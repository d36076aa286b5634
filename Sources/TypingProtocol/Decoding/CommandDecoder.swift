import CJansson
import TypingCore

/// Decodes one input line into a ``TypingCore/Request``, or the error to report.
///
/// The line goes through jansson (`json_loadb` with `JSON_REJECT_DUPLICATES` and
/// `JSON_DECODE_ANY`), then the fields are checked in the protocol's order (v3 §G):
/// `id`, `cmd`, `at`, `conv`, `user`, `thread`, `name`, `empty`, `activity`,
/// `timeout_ms`, `send_typing`, `receive_typing`, `locale`, `view`, `by`.
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

    /// Decodes `line` (without LF or trailing CR), which is line `number` of the input.
    @usableFromInline
    package func decode(_ line: UnsafeRawBufferPointer, number: Int) throws(Event.Error) -> Request {
        if let nul = Bytes.firstIndex(of: 0, in: line) {
            throw Event.Error(line: number, code: .badJSON,
                              message: "invalid JSON: the line holds a NUL byte (byte \(nul + 1)), which JSON text cannot contain")
        }
        guard let base = line.baseAddress else {
            throw Event.Error(line: number, code: .badJSON, message: "invalid JSON: the line is empty")
        }
        var error = json_error_t()
        guard let root = json_loadb(base.assumingMemoryBound(to: CChar.self), line.count,
                                    cj_decode_flags(), &error) else {
            if line.starts(with: Framer.byteOrderMark) {
                throw Event.Error(line: number, code: .badJSON, message: "invalid JSON at column 1: the line starts with a byte order mark (EF BB BF), which is skipped only at the very start of the input",
                                  column: 1)
            }
            throw CommandDecoder.report(error, line: number)
        }
        defer { json_decref(root) }
        guard cj_is_object(root) != 0 else {
            throw Event.Error(line: number, code: .notObject,
                              message: "a command must be a JSON object, like {\"cmd\":\"stats\"}; this line is \(JSONObject.describe(root))")
        }
        return try decodeObject(JSONObject(root), number: number)
    }

    /// Checks the fields of a command object.
    func decodeObject(_ object: JSONObject, number: Int) throws(Event.Error) -> Request {
        let id = try decodeID(object, number: number)
        var fields = FieldReader(line: number, id: id)

        let kind = try fields.command(object.cmd)
        let at = try decodeAt(object.at, &fields, kind: kind)
        // Every field the command reads, each checked in one place, in the
        // protocol's order; then the command is assembled from them.
        let reads = kind.reads
        var convBytes = UnsafeRawBufferPointer(start: nil, count: 0), userBytes = convBytes
        var threadBytes: UnsafeRawBufferPointer?, byBytes: UnsafeRawBufferPointer?
        var nameBytes: UnsafeRawBufferPointer?, localeBytes: UnsafeRawBufferPointer?
        var empty = false, activity = Activity.typing, timeout: Int?
        var sendTyping: Bool?, receiveTyping: Bool?
        var view = Command.View.chat
        if reads.contains(.conv) { convBytes = try fields.identifier("conv", object.conv, for: kind) }
        if reads.contains(.user) { userBytes = try fields.identifier("user", object.user, for: kind) }
        if reads.contains(.thread) { threadBytes = try fields.optionalIdentifier("thread", object.thread) }
        if reads.contains(.name) { nameBytes = try fields.name(object.name) }
        if reads.contains(.empty) { empty = try fields.flag("empty", object.empty) ?? false }
        if reads.contains(.activity) { activity = try fields.activity(object.activity) ?? .typing }
        if reads.contains(.timeout) { timeout = try fields.timeout(object.timeoutMs) }
        if reads.contains(.sendTyping) { sendTyping = try fields.flag("send_typing", object.sendTyping) }
        if reads.contains(.receiveTyping) { receiveTyping = try fields.flag("receive_typing", object.receiveTyping) }
        if reads.contains(.locale) { localeBytes = try fields.locale(object.locale) }
        if reads.contains(.view) {
            view = try fields.view(object.view) ?? .chat
            if view == .list && threadBytes != nil {
                throw fields.failure(.badField, field: "view",
                                     "a list view is always at the main timeline: open with \"view\":\"list\" takes no \"thread\"")
            }
        }
        if reads.contains(.by) { byBytes = try fields.optionalIdentifier("by", object.by) }
        // Every check passed: the values, made once.
        let conv = reads.contains(.conv) ? Identifier(bytes: convBytes) : Identifier.none
        let user = reads.contains(.user) ? Identifier(bytes: userBytes) : Identifier.none
        let thread = threadBytes.map { Identifier(bytes: $0) }
        let by = byBytes.map { Identifier(bytes: $0) }
        let name = nameBytes.map { String(decoding: $0, as: UTF8.self) }
        let locale = localeBytes.map { String(decoding: $0, as: UTF8.self) }
        let command: Command
        switch kind {
        case .join:
            command = .join(conv: conv, user: user, name: name, sendTyping: sendTyping, locale: locale,
                            receiveTyping: receiveTyping)
        case .type:
            command = .type(conv: conv, user: user, empty: empty, timeout: timeout, activity: activity, thread: thread)
        case .send: command = .send(conv: conv, user: user, thread: thread)
        case .leave: command = .leave(conv: conv, user: user)
        case .remove: command = .remove(conv: conv, user: user, by: by)
        case .offline: command = .offline(user: user)
        case .open: command = .open(conv: conv, user: user, thread: thread, view: view)
        case .close: command = .close(conv: conv, user: user)
        case .user:
            command = .user(user: user, name: name, sendTyping: sendTyping, locale: locale, receiveTyping: receiveTyping)
        case .tick: command = .tick
        case .query: command = .query(conv: conv, thread: thread)
        case .stats: command = .stats
        case .snapshot: command = .snapshot
        }
        return Request(command, id: id, at: at, line: number)
    }

    /// The `id`: a string of at most 256 bytes or an integer within ±(2^53 − 1).
    /// A bad id is reported without an id.
    @inline(never)
    func decodeID(_ object: JSONObject, number: Int) throws(Event.Error) -> Request.ID? {
        guard let value = object.id else { return nil }
        if cj_is_string(value) != 0 {
            let bytes = JSONObject.bytes(ofString: value)
            if bytes.count <= FieldLimits.maxIdentifierBytes {
                return .string(String(decoding: bytes, as: UTF8.self))
            }
            throw Event.Error(line: number, code: .badField,
                              message: "\"id\" is \(bytes.count) bytes long; a string id may have at most \(FieldLimits.maxIdentifierBytes)",
                              field: "id")
        }
        if cj_is_integer(value) != 0 {
            let integer = json_integer_value(value)
            if integer >= -Int64(Engine.maxTime) && integer <= Int64(Engine.maxTime) {
                return .integer(Int(integer))
            }
            throw Event.Error(line: number, code: .badField,
                              message: "\"id\" \(integer) is out of range; an integer id must be within ±\(Engine.maxTime)",
                              field: "id")
        }
        throw Event.Error(line: number, code: .badField,
                          message: "\"id\" must be a string of at most \(FieldLimits.maxIdentifierBytes) bytes or an integer, not \(JSONObject.describe(value))",
                          field: "id")
    }

    /// The `at`: allowed only with the manual clock, required by `tick`.
    @inline(never)
    func decodeAt(_ value: JSONObject.Value?, _ fields: inout FieldReader, kind: Command.Name) throws(Event.Error) -> Int? {
        if clock == .real {
            if value != nil {
                throw fields.failure(.clockMode, field: "at",
                                     "\"at\" is only for --clock manual; with the real clock, a command happens when it is read")
            }
            if kind == .tick {
                throw fields.failure(.clockMode, field: "cmd",
                                     "tick is only for --clock manual; the real clock advances by itself")
            }
            return nil
        }
        guard let value else {
            if kind == .tick {
                throw fields.failure(.missingField, field: "at",
                                     "tick needs \"at\", the time in milliseconds to move the clock to")
            }
            return nil
        }
        if cj_is_integer(value) != 0 {
            let integer = json_integer_value(value)
            if integer >= 0 && integer <= Int64(Engine.maxTime) { return Int(integer) }
            throw fields.failure(.badField, field: "at",
                                 "\"at\" must be from 0 to \(Engine.maxTime) milliseconds, not \(integer)")
        }
        throw fields.failure(.badField, field: "at",
                             "\"at\" must be an integer number of milliseconds, not \(JSONObject.describe(value))")
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
            text = "strings must not contain \\u0000" + (text.firstRange(of: " near ").map { String(text[$0.lowerBound...]) } ?? "")
        }
        let column = Int(error.column)
        let place = column > 0 ? " at column \(column)" : ""
        return Event.Error(line: line, code: .badJSON, message: "invalid JSON\(place): \(text)",
                           column: column > 0 ? column : nil)
    }
}

/// The fields a command reads, besides `id`, `cmd` and `at`.
struct Reads: OptionSet {
    let rawValue: UInt16
    static let conv = Reads(rawValue: 1 << 0)
    static let user = Reads(rawValue: 1 << 1)
    static let thread = Reads(rawValue: 1 << 2)
    static let name = Reads(rawValue: 1 << 3)
    static let empty = Reads(rawValue: 1 << 4)
    static let activity = Reads(rawValue: 1 << 5)
    static let timeout = Reads(rawValue: 1 << 6)
    static let sendTyping = Reads(rawValue: 1 << 7)
    static let receiveTyping = Reads(rawValue: 1 << 8)
    static let locale = Reads(rawValue: 1 << 9)
    static let view = Reads(rawValue: 1 << 10)
    static let by = Reads(rawValue: 1 << 11)
}

extension Command.Name {
    /// The fields this command reads (`conv` and `user` are required where read;
    /// the others optional): the protocol's table of commands (v3 §G).
    var reads: Reads {
        switch self {
        case .join: return [.conv, .user, .name, .sendTyping, .receiveTyping, .locale]
        case .type: return [.conv, .user, .thread, .empty, .activity, .timeout]
        case .send: return [.conv, .user, .thread]
        case .leave, .close: return [.conv, .user]
        case .remove: return [.conv, .user, .by]
        case .offline: return [.user]
        case .open: return [.conv, .user, .thread, .view]
        case .user: return [.user, .name, .sendTyping, .receiveTyping, .locale]
        case .query: return [.conv, .thread]
        case .tick, .stats, .snapshot: return []
        }
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
