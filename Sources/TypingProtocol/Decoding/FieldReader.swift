import CJansson
import TypingCore

/// The sizes the decoder enforces, from the field rules of Protocol.md#commands
/// (times and integer ids are limited by ``TypingCore/Engine/maxTime``).
enum FieldLimits {
    /// The most bytes of a string `id`, `conv`, `user` or `by`.
    static let maxIdentifierBytes = 256
    /// The most bytes of a `name` (what bounds a phrase table's longest phrase).
    static let maxNameBytes = PhraseTable.maxNameBytes
    /// The most bytes of a keystroke's `status` words.
    static let maxStatusBytes = 256
}

/// Reads and checks the fields of one command object, building errors that carry
/// the line number and the command's id.
///
/// It holds no copy of the object's fields (each check is given its value): it
/// is passed to every check, and a copy of 15 pointers each time would cost more
/// than the check.
/// Each check is out of line: the decoder calls them from every command's case, and
/// one copy of each (with its messages) keeps the decoder's common path small.
struct FieldReader {
    /// The line number, for errors.
    let line: Int
    /// The command's id, for errors.
    let id: Request.ID?

    /// The error to throw for `field`.
    func failure(_ code: Event.Error.Code, field: String, _ message: String) -> Event.Error {
        Event.Error(line: line, id: id, code: code, message: message, field: field)
    }

    // The checks return the value's bytes, borrowed from jansson, not a Swift value:
    // the decoder makes its ids and strings once every check has passed, so that no
    // error on the way has anything to release.

    /// The `cmd`: a string naming one of the commands.
    @inline(never)
    func command(_ value: CommandFields.Value?) throws(Event.Error) -> Command.Name {
        guard let value else {
            throw failure(
                .missingField, field: "cmd",
                "the command has no \"cmd\"; it needs one of \(Command.Name.list)")
        }
        guard cj_is_string(value) != 0 else {
            throw failure(
                .badField, field: "cmd",
                "\"cmd\" must be a string (one of \(Command.Name.list)), not \(JSONValue.describe(value))")
        }
        let bytes = JSONValue.bytes(ofString: value)
        guard let kind = Command.Name(bytes: bytes) else {
            throw failure(
                .unknownCmd, field: "cmd",
                "unknown command \(Quote.bytes(bytes)); the commands are \(Command.Name.list)")
        }
        return kind
    }

    /// A required id field (`conv`, `user`): a non-empty string of at most 256 bytes.
    @inline(never)
    func identifier(_ key: StaticString, _ value: CommandFields.Value?, for command: Command.Name) throws(Event.Error)
        -> UnsafeRawBufferPointer
    {
        guard let value else {
            throw failure(
                .missingField, field: "\(key)",
                "\(command.rawValue) needs \"\(key)\", a non-empty string of at most \(FieldLimits.maxIdentifierBytes) bytes"
            )
        }
        return try identifier(value, key: key)
    }

    /// An optional id field (`by`).
    @inline(never)
    func optionalIdentifier(_ key: StaticString, _ value: CommandFields.Value?) throws(Event.Error)
        -> UnsafeRawBufferPointer?
    {
        guard let value else { return nil }
        return try identifier(value, key: key)
    }

    /// Checks an id value.
    @inline(never)
    func identifier(_ value: UnsafeMutablePointer<json_t>, key: StaticString) throws(Event.Error)
        -> UnsafeRawBufferPointer
    {
        guard cj_is_string(value) != 0 else {
            throw failure(
                .badField, field: "\(key)",
                "\"\(key)\" must be a non-empty string of at most \(FieldLimits.maxIdentifierBytes) bytes, not \(JSONValue.describe(value))"
            )
        }
        let bytes = JSONValue.bytes(ofString: value)
        if bytes.isEmpty {
            throw failure(.badField, field: "\(key)", "\"\(key)\" must not be empty")
        }
        if bytes.count > FieldLimits.maxIdentifierBytes {
            throw failure(
                .badField, field: "\(key)",
                "\"\(key)\" is \(bytes.count) bytes long; the most is \(FieldLimits.maxIdentifierBytes)")
        }
        return bytes
    }

    /// The optional `name` of a join: a string of at most 1024 bytes, maybe empty.
    @inline(never)
    func name(_ value: CommandFields.Value?) throws(Event.Error) -> UnsafeRawBufferPointer? {
        guard let value else { return nil }
        guard cj_is_string(value) != 0 else {
            throw failure(
                .badField, field: "name",
                "\"name\" must be a string of at most \(FieldLimits.maxNameBytes) bytes, not \(JSONValue.describe(value))"
            )
        }
        let bytes = JSONValue.bytes(ofString: value)
        if bytes.count > FieldLimits.maxNameBytes {
            throw failure(
                .badField, field: "name",
                "\"name\" is \(bytes.count) bytes long; the most is \(FieldLimits.maxNameBytes)")
        }
        return bytes
    }

    /// The optional `timeout_ms` of a keystroke: an integer (as jansson reads it:
    /// `1000.0` and `1e3` are not) within the timeout range.
    @inline(never)
    func timeout(_ value: CommandFields.Value?) throws(Event.Error) -> Int? {
        guard let value else { return nil }
        let range = EngineConfiguration.timeoutRange
        guard cj_is_integer(value) != 0 else {
            throw failure(
                .badField, field: "timeout_ms",
                "\"timeout_ms\" must be an integer number of milliseconds from \(range.lowerBound) to \(range.upperBound), not \(JSONValue.describe(value))"
            )
        }
        let integer = json_integer_value(value)
        guard integer >= Int64(range.lowerBound) && integer <= Int64(range.upperBound) else {
            throw failure(
                .badField, field: "timeout_ms",
                "\"timeout_ms\" must be from \(range.lowerBound) to \(range.upperBound) milliseconds, not \(integer)")
        }
        return Int(integer)
    }

    /// The optional `activity` of a keystroke: one of the activities' names.
    @inline(never)
    func activity(_ value: CommandFields.Value?) throws(Event.Error) -> Activity? {
        guard let value else { return nil }
        guard cj_is_string(value) != 0 else {
            throw failure(
                .badField, field: "activity",
                "\"activity\" must be one of \(Activity.list), not \(JSONValue.describe(value))")
        }
        let bytes = JSONValue.bytes(ofString: value)
        guard let activity = Activity.allCases.first(where: { $0.name.utf8.elementsEqual(bytes) }) else {
            throw failure(
                .badField, field: "activity",
                "\"activity\" must be one of \(Activity.list), not \(Quote.bytes(bytes))")
        }
        return activity
    }

    /// The `status` of a keystroke (Protocol.md#status-in-ones-own-words): required
    /// with activity `status`, refused with any other; 1–256 bytes holding no
    /// control character (U+0000–U+001F, U+007F–U+009F).
    @inline(__always)
    func status(_ value: CommandFields.Value?, activity: Activity) throws(Event.Error) -> UnsafeRawBufferPointer? {
        // Most keystrokes have neither: checked here, inline, not in a call per line.
        if value == nil && activity != .status { return nil }
        return try checkedStatus(value, activity: activity)
    }

    /// ``status(_:activity:)`` where a status or its activity is given.
    @inline(never)
    func checkedStatus(_ value: CommandFields.Value?, activity: Activity) throws(Event.Error) -> UnsafeRawBufferPointer?
    {
        guard let value else {
            guard activity != .status else {
                throw failure(
                    .missingField, field: "status",
                    "type with \"activity\":\"status\" needs \"status\", the words shown after the typer's name (1 to \(FieldLimits.maxStatusBytes) bytes)"
                )
            }
            return nil
        }
        guard activity == .status else {
            throw failure(
                .badField, field: "status",
                "\"status\" goes only with \"activity\":\"status\"; this keystroke's activity is \(activity.name)")
        }
        guard cj_is_string(value) != 0 else {
            throw failure(
                .badField, field: "status",
                "\"status\" must be a string of 1 to \(FieldLimits.maxStatusBytes) bytes, not \(JSONValue.describe(value))"
            )
        }
        let bytes = JSONValue.bytes(ofString: value)
        if bytes.isEmpty {
            throw failure(
                .badField, field: "status", "\"status\" must not be empty: it is the words shown after the typer's name"
            )
        }
        if bytes.count > FieldLimits.maxStatusBytes {
            throw failure(
                .badField, field: "status",
                "\"status\" is \(bytes.count) bytes long; the most is \(FieldLimits.maxStatusBytes)")
        }
        for index in bytes.indices {
            let byte = bytes[index]
            let control: UInt32? =
                byte < 0x20 || byte == 0x7F
                ? UInt32(byte)
                : byte == 0xC2 && index + 1 < bytes.count && (0x80...0x9F).contains(bytes[index + 1])
                    ? UInt32(bytes[index + 1])
                    : nil
            if let control {
                let hex = String(control, radix: 16, uppercase: true)
                throw failure(
                    .badField, field: "status",
                    "\"status\" holds U+\(String(repeating: "0", count: 4 - hex.count))\(hex) at byte \(index + 1), a control character, which status words never hold"
                )
            }
        }
        return bytes
    }

    /// The optional `locale` of a join or user: a language tag, 1–35 bytes of ASCII
    /// letters, digits and `-`.
    @inline(never)
    func locale(_ value: CommandFields.Value?) throws(Event.Error) -> UnsafeRawBufferPointer? {
        guard let value else { return nil }
        guard cj_is_string(value) != 0 else {
            throw failure(
                .badField, field: "locale",
                "\"locale\" must be a language tag such as \"de\" or \"pt-BR\", not \(JSONValue.describe(value))")
        }
        let bytes = JSONValue.bytes(ofString: value)
        guard PhraseTable.isLocaleTag(bytes) else {
            let tag = String(decoding: bytes, as: UTF8.self)
            throw failure(
                .badField, field: "locale",
                "\"locale\" must be 1 to 35 ASCII letters, digits and \"-\" (such as \"de\" or \"pt-BR\"), not \(Quote.string(tag))"
            )
        }
        return bytes
    }

    /// The optional `view` of an open: `chat` or `list`.
    @inline(never)
    func view(_ value: CommandFields.Value?) throws(Event.Error) -> Command.View? {
        guard let value else { return nil }
        let names = Command.View.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
        guard cj_is_string(value) != 0 else {
            throw failure(.badField, field: "view", "\"view\" must be \(names), not \(JSONValue.describe(value))")
        }
        let bytes = JSONValue.bytes(ofString: value)
        guard let view = Command.View.allCases.first(where: { $0.rawValue.utf8.elementsEqual(bytes) }) else {
            throw failure(.badField, field: "view", "\"view\" must be \(names), not \(Quote.bytes(bytes))")
        }
        return view
    }

    /// The optional `pane` of an open or close: `main` or `side`
    /// (Protocol.md#side-panes).
    @inline(never)
    func pane(_ value: CommandFields.Value?) throws(Event.Error) -> Command.Pane? {
        guard let value else { return nil }
        let names = Command.Pane.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
        guard cj_is_string(value) != 0 else {
            throw failure(.badField, field: "pane", "\"pane\" must be \(names), not \(JSONValue.describe(value))")
        }
        let bytes = JSONValue.bytes(ofString: value)
        guard let pane = Command.Pane.allCases.first(where: { $0.rawValue.utf8.elementsEqual(bytes) }) else {
            throw failure(.badField, field: "pane", "\"pane\" must be \(names), not \(Quote.bytes(bytes))")
        }
        return pane
    }

    /// The optional `announce_at` of a restore: when the screen's pending
    /// announcement fires, an integer from 0 to 2^53 − 1 (and not before the
    /// command's time, which the engine checks).
    @inline(never)
    func announceAt(_ value: CommandFields.Value?) throws(Event.Error) -> Int? {
        guard let value else { return nil }
        guard cj_is_integer(value) != 0 else {
            throw failure(
                .badField, field: "announce_at",
                "\"announce_at\" must be an integer time in milliseconds from 0 to \(Engine.maxTime), when the screen's pending announcement fires, not \(JSONValue.describe(value))"
            )
        }
        let integer = json_integer_value(value)
        guard integer >= 0 && integer <= Int64(Engine.maxTime) else {
            throw failure(
                .badField, field: "announce_at",
                "\"announce_at\" must be from 0 to \(Engine.maxTime) milliseconds, not \(integer)")
        }
        return Int(integer)
    }

    /// The optional `announced` of a restore: the text the screen last announced,
    /// a string (empty: nothing).
    @inline(never)
    func announced(_ value: CommandFields.Value?) throws(Event.Error) -> UnsafeRawBufferPointer? {
        guard let value else { return nil }
        guard cj_is_string(value) != 0 else {
            throw failure(
                .badField, field: "announced",
                "\"announced\" must be a string, the text the screen last announced (\"\" for nothing), not \(JSONValue.describe(value))"
            )
        }
        return JSONValue.bytes(ofString: value)
    }

    /// An optional boolean field (`empty`, `send_typing`, `receive_typing`).
    @inline(never)
    func flag(_ key: StaticString, _ value: CommandFields.Value?) throws(Event.Error) -> Bool? {
        guard let value else { return nil }
        guard cj_is_boolean(value) != 0 else {
            throw failure(
                .badField, field: "\(key)",
                "\"\(key)\" must be true or false, not \(JSONValue.describe(value))")
        }
        return cj_is_true(value) != 0
    }
}
