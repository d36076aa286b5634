import CJansson

/// The fields of a command object that typingd reads, found in one pass over the
/// object's keys (cheaper than a hash lookup per field). Values are borrowed
/// from jansson: valid while the decoded line is alive. jansson has already
/// rejected duplicate keys, so each field is seen at most once.
struct JSONObject {
    typealias Value = UnsafeMutablePointer<json_t>

    var id: Value?
    var cmd: Value?
    var at: Value?
    var conv: Value?
    var user: Value?
    var name: Value?
    var empty: Value?
    var by: Value?

    /// Collects the known fields of `object` (the caller checked it is one).
    init(_ object: Value) {
        var iterator = json_object_iter(object)
        while let current = iterator {
            if let key = json_object_iter_key(current), let value = json_object_iter_value(current) {
                file(value, under: UnsafeRawPointer(key), count: json_object_iter_key_len(current))
            }
            iterator = json_object_iter_next(object, current)
        }
    }

    /// Keeps `value` if `key` (of `count` bytes) names a field typingd reads.
    private mutating func file(_ value: Value, under key: UnsafeRawPointer, count: Int) {
        @inline(__always) func byte(_ index: Int) -> UInt8 { key.load(fromByteOffset: index, as: UInt8.self) }
        switch count {
        case 2:
            switch (byte(0), byte(1)) {
            case (0x69, 0x64): id = value  // "id"
            case (0x61, 0x74): at = value  // "at"
            case (0x62, 0x79): by = value  // "by"
            default: break
            }
        case 3:
            if byte(0) == 0x63 && byte(1) == 0x6D && byte(2) == 0x64 { cmd = value }  // "cmd"
        case 4:
            let word = key.loadUnaligned(as: UInt32.self)
            if word == JSONObject.word("conv") { conv = value }
            else if word == JSONObject.word("user") { user = value }
            else if word == JSONObject.word("name") { name = value }
        case 5:
            if key.loadUnaligned(as: UInt32.self) == JSONObject.word("empt") && byte(4) == 0x79 { empty = value }
        default:
            break
        }
    }

    /// Four ASCII bytes as they lie in memory, read as one word.
    @inline(__always)
    private static func word(_ text: StaticString) -> UInt32 {
        UnsafeRawPointer(text.utf8Start).loadUnaligned(as: UInt32.self)
    }
}
