import CNats

/// A key-value bucket (JetStream's KV): values with revisions, create-if-absent
/// and compare-and-set updates: what leases, checkpoints and name fences are
/// built on.
public final class KeyValue: @unchecked Sendable {
    let raw: OpaquePointer
    /// The bucket's name.
    public let bucket: String
    let jetStream: JetStream

    /// A bucket's settings.
    public struct Config: Sendable {
        public var bucket: String
        /// How long a value lives after it was last written, ms (0: for ever).
        public var ttl: Int64 = 0
        public var replicas: Int = 1
        public var history: UInt8 = 1

        public init(bucket: String, ttl: Int64 = 0, replicas: Int = 1) {
            self.bucket = bucket
            self.ttl = ttl
            self.replicas = replicas
        }
    }

    /// A value and its revision.
    public struct Entry: Sendable {
        public var value: [UInt8]
        public var revision: UInt64
    }

    init(raw: OpaquePointer, bucket: String, jetStream: JetStream) {
        self.raw = raw
        self.bucket = bucket
        self.jetStream = jetStream
    }

    deinit { kvStore_Destroy(raw) }

    /// Binds to bucket `name`.
    public static func open(_ name: String, in js: JetStream) throws(NatsError) -> KeyValue {
        var kv: OpaquePointer? = nil
        try check(js_KeyValue(&kv, js.raw, name), "opening bucket \(name)")
        guard let kv else { throw NatsError(invalid: "nats.c made no bucket") }
        return KeyValue(raw: kv, bucket: name, jetStream: js)
    }

    /// Makes bucket `config.bucket` (or binds to it, if it exists with these settings).
    public static func create(_ config: Config, in js: JetStream) throws(NatsError) -> KeyValue {
        var cfg = kvConfig()
        try check(kvConfig_Init(&cfg), "making bucket options")
        var kv: OpaquePointer? = nil
        try withC(config.bucket) { (name) throws(NatsError) in
            cfg.Bucket = name
            cfg.TTL = config.ttl * 1_000_000 // nats.c wants ns (its MaxAge); ttl is ms
            cfg.Replicas = Int32(config.replicas)
            cfg.History = config.history
            cfg.StorageType = js_FileStorage
            try check(js_CreateKeyValue(&kv, js.raw, &cfg), "making bucket \(config.bucket)")
        }
        guard let kv else { throw NatsError(invalid: "nats.c made no bucket") }
        return KeyValue(raw: kv, bucket: config.bucket, jetStream: js)
    }

    /// Deletes bucket `name`; one that is not there is fine.
    public static func delete(_ name: String, in js: JetStream) throws(NatsError) {
        let status = js_DeleteKeyValue(js.raw, name)
        if status == NATS_NOT_FOUND { return }
        try check(status, "deleting bucket \(name)")
    }

    /// The value of `key`; nil when it has none (never set, deleted or expired).
    public func get(_ key: String) throws(NatsError) -> Entry? {
        var entry: OpaquePointer? = nil
        let status = kvStore_Get(&entry, raw, key)
        if status == NATS_NOT_FOUND { return nil }
        try check(status, "reading \(key) of \(bucket)")
        guard let entry else { return nil }
        defer { kvEntry_Destroy(entry) }
        let count = Int(kvEntry_ValueLen(entry))
        let value: [UInt8] =
            count > 0 ? kvEntry_Value(entry).map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? [] : []
        return Entry(value: value, revision: kvEntry_Revision(entry))
    }

    /// Sets `key` only if it has no value; its revision. Throws with
    /// ``NatsError/isWrongRevision`` when it has one.
    public func create(_ key: String, _ value: [UInt8]) throws(NatsError) -> UInt64 {
        var revision: UInt64 = 0
        let status = value.withUnsafeBytes { kvStore_Create(&revision, raw, key, $0.baseAddress, Int32($0.count)) }
        try check(status, nats_GetLastErrorCode(), "creating \(key) in \(bucket)")
        return revision
    }

    /// Sets `key` only if its revision is still `last`; its new revision.
    public func update(_ key: String, _ value: [UInt8], last: UInt64) throws(NatsError) -> UInt64 {
        var revision: UInt64 = 0
        let status = value.withUnsafeBytes {
            kvStore_Update(&revision, raw, key, $0.baseAddress, Int32($0.count), last)
        }
        try check(status, nats_GetLastErrorCode(), "updating \(key) in \(bucket)")
        return revision
    }

    /// Sets `key` whatever it holds; its new revision.
    public func put(_ key: String, _ value: [UInt8]) throws(NatsError) -> UInt64 {
        var revision: UInt64 = 0
        let status = value.withUnsafeBytes { kvStore_Put(&revision, raw, key, $0.baseAddress, Int32($0.count)) }
        try check(status, "writing \(key) in \(bucket)")
        return revision
    }

    /// Deletes `key`'s value.
    public func delete(_ key: String) throws(NatsError) {
        try check(kvStore_Delete(raw, key), "deleting \(key) of \(bucket)")
    }
}

/// nats.c keeps a KV call's JetStream error code nowhere but in its error text.
func nats_GetLastErrorCode() -> jsErrCode {
    var status = NATS_OK
    guard let text = nats_GetLastError(&status).map({ String(cString: $0) }) else { return jsErrCode(rawValue: 0) }
    if text.contains("10071") || text.contains("wrong last sequence") { return jsErrCode(rawValue: 10071) }
    return jsErrCode(rawValue: 0)
}
