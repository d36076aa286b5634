/// A dictionary that gives its storage back: rebuilt in storage of its size once it
/// holds less than a quarter of what it grew to. (A Swift dictionary never shrinks
/// by itself: 400,000 users who set a locale and left kept 30 MB.) The engine keeps
/// what only some users have beside their records in these: their locales, the
/// names they gave where the display name differs, their open views.
package struct ShrinkingDictionary<Key: Hashable, Value> {
    /// The entries.
    package private(set) var storage: [Key: Value] = [:]
    /// The most entries held since the storage was last rebuilt.
    private(set) var highWater = 0

    /// Below this many entries at their peak, storage is never rebuilt.
    static var minimumHighWater: Int { 64 }

    /// An empty dictionary.
    init() {}

    /// Entries.
    package var count: Int { storage.count }
    /// True when it holds nothing.
    var isEmpty: Bool { storage.isEmpty }
    /// The keys.
    var keys: Dictionary<Key, Value>.Keys { storage.keys }
    /// The values.
    var values: Dictionary<Key, Value>.Values { storage.values }

    /// The value for `key`; setting nil removes it.
    @inline(__always)
    package subscript(key: Key) -> Value? {
        // An empty dictionary is not hashed into: most users have none of what
        // these hold.
        get { storage.isEmpty ? nil : storage[key] }
        set {
            if let newValue {
                storage[key] = newValue
                highWater = max(highWater, storage.count)
            } else if !storage.isEmpty && storage.removeValue(forKey: key) != nil {
                shrinkIfSparse()
            }
        }
    }

    /// Changes the value for `key`, if present, in place (no copy of it).
    @inline(__always)
    mutating func update<R>(_ key: Key, _ body: (inout Value) -> R) -> R? {
        guard let index = storage.index(forKey: key) else { return nil }
        return body(&storage.values[index])
    }

    /// Removes and returns the value for `key`.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let value = storage.removeValue(forKey: key) else { return nil }
        shrinkIfSparse()
        return value
    }

    /// Rebuilds the storage at its size once it holds less than a quarter of what
    /// it grew to: O(entries), paid for by the removals since the peak.
    private mutating func shrinkIfSparse() {
        guard highWater > Self.minimumHighWater, storage.count * 4 < highWater else { return }
        var smaller = [Key: Value](minimumCapacity: storage.count)
        for (key, value) in storage { smaller[key] = value }
        storage = smaller
        highWater = storage.count
    }
}
