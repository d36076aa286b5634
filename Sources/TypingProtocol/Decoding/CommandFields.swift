import CJansson

/// The fields of a command object that typingd reads. Values are borrowed from
/// jansson: valid while the decoded line is alive.
///
/// The fields most lines have are looked up once, here; the others (each used by
/// one or two commands) when their command reads them, and only if the object has
/// keys left unaccounted for. That keeps this value at 104 bytes: past 128, every
/// copy of it became a call to `memcpy` (bench/RESULTS.md).
struct CommandFields {
    typealias Value = UnsafeMutablePointer<json_t>

    var id: Value?
    var cmd: Value?
    var at: Value?
    var conv: Value?
    var user: Value?
    var name: Value?
    var empty: Value?
    var timeoutMs: Value?
    var thread: Value?
    var activity: Value?
    var status: Value?
    /// The object, for the fields looked up when read.
    private let object: Value
    /// How many of the object's keys are none of the fields above.
    private let rest: Int

    var sendTyping: Value? { later("send_typing") }
    var by: Value? { later("by") }
    var receiveTyping: Value? { later("receive_typing") }
    var locale: Value? { later("locale") }
    var view: Value? { later("view") }
    var pane: Value? { later("pane") }
    var announceAt: Value? { later("announce_at") }
    var announced: Value? { later("announced") }

    /// Collects the known fields of `object` (the caller checked it is one).
    ///
    /// Looks up the four fields almost every command has, then the optional ones,
    /// the most used first, only while the object has keys left unaccounted for
    /// (most lines have none, or one: a join's `name`).
    init(_ object: Value) {
        self.object = object
        cmd = CommandFields.get(object, "cmd")
        conv = CommandFields.get(object, "conv")
        user = CommandFields.get(object, "user")
        at = CommandFields.get(object, "at")
        var left =
            json_object_size(object)
            - (cmd == nil ? 0 : 1) - (conv == nil ? 0 : 1) - (user == nil ? 0 : 1) - (at == nil ? 0 : 1)
        @inline(__always) func take(_ key: StaticString) -> Value? {
            guard left > 0, let value = CommandFields.get(object, key) else { return nil }
            left -= 1
            return value
        }
        id = take("id")
        name = take("name")
        empty = take("empty")
        thread = take("thread")
        activity = take("activity")
        status = take("status")
        timeoutMs = take("timeout_ms")
        rest = left
    }

    /// The value of `key`, one of the fields looked up when read.
    @inline(__always)
    private func later(_ key: StaticString) -> Value? {
        rest > 0 ? CommandFields.get(object, key) : nil
    }

    /// The value of `key` in `object`, if present (borrowed).
    @inline(__always)
    private static func get(_ object: Value, _ key: StaticString) -> Value? {
        json_object_getn(
            object, UnsafeRawPointer(key.utf8Start).assumingMemoryBound(to: CChar.self),
            key.utf8CodeUnitCount)
    }
}

/// What typingd asks of one jansson value, wherever it reads JSON (commands, phrase
/// tables).
package enum JSONValue {
    /// The UTF-8 bytes of a string value (borrowed; jansson checked they are UTF-8).
    package static func bytes(ofString value: UnsafeMutablePointer<json_t>) -> UnsafeRawBufferPointer {
        let count = json_string_length(value)
        guard let start = json_string_value(value) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: start, count: count)
    }

    /// "an array", "null", …: what a value is, for messages.
    static func describe(_ value: UnsafeMutablePointer<json_t>) -> String {
        switch cj_typeof(value) {
        case JSON_OBJECT: return "an object"
        case JSON_ARRAY: return "an array"
        case JSON_STRING: return "a string"
        case JSON_INTEGER: return "an integer"
        case JSON_REAL: return "a number with a fraction or exponent"
        case JSON_TRUE: return "true"
        case JSON_FALSE: return "false"
        case JSON_NULL: return "null"
        default: return "an unknown JSON value"
        }
    }
}
