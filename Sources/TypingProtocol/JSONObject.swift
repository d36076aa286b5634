import CJansson

/// A borrowed jansson object: lookups return borrowed values, valid while the
/// decoded line is alive. Nothing here is reference-counted by Swift.
struct JSONObject {
    /// The object.
    let pointer: UnsafeMutablePointer<json_t>

    /// Wraps an object (the caller checked `cj_is_object`).
    init(_ pointer: UnsafeMutablePointer<json_t>) {
        self.pointer = pointer
    }

    /// The value of `key`, if present (a borrowed reference).
    subscript(key: StaticString) -> UnsafeMutablePointer<json_t>? {
        json_object_getn(pointer, UnsafeRawPointer(key.utf8Start).assumingMemoryBound(to: CChar.self),
                         key.utf8CodeUnitCount)
    }
}
