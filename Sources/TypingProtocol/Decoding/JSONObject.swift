import CJansson

/// The fields of a command object that typingd reads. Values are borrowed from
/// jansson: valid while the decoded line is alive.
struct JSONObject {
    typealias Value = UnsafeMutablePointer<json_t>

    var id: Value?
    var cmd: Value?
    var at: Value?
    var conv: Value?
    var user: Value?
    var name: Value?
    var empty: Value?
    var timeoutMs: Value?
    var sendTyping: Value?
    var by: Value?
    var thread: Value?
    var activity: Value?
    var receiveTyping: Value?
    var locale: Value?
    var view: Value?

    /// Collects the known fields of `object` (the caller checked it is one).
    ///
    /// Looks up the four fields almost every command has, then the optional ones
    /// only if the object has keys left unaccounted for (most lines have none).
    init(_ object: Value) {
        cmd = JSONObject.get(object, "cmd")
        conv = JSONObject.get(object, "conv")
        user = JSONObject.get(object, "user")
        at = JSONObject.get(object, "at")
        var found = (cmd == nil ? 0 : 1) + (conv == nil ? 0 : 1) + (user == nil ? 0 : 1) + (at == nil ? 0 : 1)
        let size = json_object_size(object)
        guard found < size else { return }
        id = JSONObject.get(object, "id")
        if id != nil { found += 1 }
        guard found < size else { return }
        empty = JSONObject.get(object, "empty")
        name = JSONObject.get(object, "name")
        timeoutMs = JSONObject.get(object, "timeout_ms")
        sendTyping = JSONObject.get(object, "send_typing")
        by = JSONObject.get(object, "by")
        thread = JSONObject.get(object, "thread")
        activity = JSONObject.get(object, "activity")
        receiveTyping = JSONObject.get(object, "receive_typing")
        locale = JSONObject.get(object, "locale")
        view = JSONObject.get(object, "view")
    }

    /// The value of `key` in `object`, if present (borrowed).
    @inline(__always)
    private static func get(_ object: Value, _ key: StaticString) -> Value? {
        json_object_getn(object, UnsafeRawPointer(key.utf8Start).assumingMemoryBound(to: CChar.self),
                         key.utf8CodeUnitCount)
    }

    /// The UTF-8 bytes of a string value (borrowed; jansson checked they are UTF-8).
    static func bytes(ofString value: UnsafeMutablePointer<json_t>) -> UnsafeRawBufferPointer {
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
