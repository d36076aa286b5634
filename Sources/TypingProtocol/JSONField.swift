import CJansson

/// Helpers to read jansson values.
enum JSONField {
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
