import CNats
#if canImport(Glibc)
import Glibc
#endif

/// JetStream over a connection (nats.c's `jsCtx`): streams, consumers, publishing
/// with acknowledgement, reading stored messages, key-value buckets.
public final class JetStream: @unchecked Sendable {
    let raw: OpaquePointer
    /// The connection it works over.
    public let connection: NatsConnection
    /// How long an API call (and a publish) waits for the server, in ms.
    public let wait: Int64

    /// A JetStream context whose calls wait up to `wait` ms.
    public init(_ connection: NatsConnection, wait: Int64 = 2000) throws(NatsError) {
        self.connection = connection
        self.wait = wait
        var opts = jsOptions()
        try check(jsOptions_Init(&opts), "making JetStream options")
        opts.Wait = wait
        var js: OpaquePointer? = nil
        try check(natsConnection_JetStream(&js, connection.raw, &opts), "opening JetStream")
        guard let js else { throw NatsError(invalid: "nats.c made no JetStream context") }
        raw = js
    }

    deinit { jsCtx_Destroy(raw) }

    /// What the stream said of a stored message.
    public struct PublishAck: Sendable {
        /// Its sequence in the stream.
        public var sequence: UInt64
        /// Whether the stream had it already (same message id, within the window).
        public var duplicate: Bool
    }

    /// Stores `message` and waits for the stream's acknowledgement. With `id`,
    /// the stream stores it once within its duplicate window, however often it
    /// is sent.
    public func publish(_ message: NatsMessage, id: String? = nil, timeout: Int64? = nil) throws(NatsError)
        -> PublishAck
    {
        try withCMessage(message) { (msg) throws(NatsError) -> PublishAck in
            var opts = jsPubOptions()
            try check(jsPubOptions_Init(&opts), "making publish options")
            opts.MaxWait = timeout ?? wait
            var ack: UnsafeMutablePointer<jsPubAck>? = nil
            var code = jsErrCode(rawValue: 0)
            let status: natsStatus
            if let id {
                status = id.withCString { idPointer in
                    opts.MsgId = idPointer
                    return js_PublishMsg(&ack, raw, msg, &opts, &code)
                }
            } else {
                status = js_PublishMsg(&ack, raw, msg, &opts, &code)
            }
            try check(status, code, "storing a message on \(message.subject)")
            guard let ack else { throw NatsError(invalid: "no acknowledgement") }
            defer { jsPubAck_Destroy(ack) }
            return PublishAck(sequence: ack.pointee.Sequence, duplicate: ack.pointee.Duplicate)
        }
    }

    // MARK: Streams

    /// How a stream stores.
    public enum Storage: Sendable { case file, memory }

    /// A stream's settings.
    public struct StreamConfig: Sendable {
        public var name: String
        public var subjects: [String]
        public var storage: Storage = .file
        public var replicas: Int = 1
        /// The duplicate window, in ms (0: the server's default, two minutes).
        public var duplicateWindow: Int64 = 0
        /// Messages kept per subject (-1: no limit).
        public var maxMessagesPerSubject: Int64 = -1
        /// The largest message it stores (-1: the server's limit).
        public var maxMessageSize: Int32 = -1
        /// Whether any replica may answer direct gets.
        public var allowDirect = false
        /// Free text kept with the stream (nats-server 2.9 has no metadata).
        public var description: String? = nil

        public init(name: String, subjects: [String]) {
            self.name = name
            self.subjects = subjects
        }
    }

    /// What a stream is now.
    public struct StreamInfo: Sendable {
        public var firstSequence: UInt64
        public var lastSequence: UInt64
        public var messages: UInt64
        public var bytes: UInt64
        /// When it was made, in ns since 1970 (tells a stream made anew apart).
        public var created: Int64
        /// The server leading it, if it is replicated.
        public var leader: String?
        /// Its replicas' servers, leader first.
        public var replicas: [String]
        /// Its configuration: the description, how it stores, the replicas asked,
        /// how long a message lives (ns, 0: for ever).
        public var description: String? = nil
        public var storage: Storage = .file
        public var configuredReplicas = 1
        public var maxAge: Int64 = 0

        public init(
            firstSequence: UInt64 = 0, lastSequence: UInt64 = 0, messages: UInt64 = 0, bytes: UInt64 = 0,
            created: Int64 = 0, leader: String? = nil, replicas: [String] = []
        ) {
            self.firstSequence = firstSequence
            self.lastSequence = lastSequence
            self.messages = messages
            self.bytes = bytes
            self.created = created
            self.leader = leader
            self.replicas = replicas
        }
    }

    /// Makes a stream.
    public func addStream(_ config: StreamConfig) throws(NatsError) {
        var cfg = jsStreamConfig()
        try check(jsStreamConfig_Init(&cfg), "making stream options")
        try withC(config.name) { (name) throws(NatsError) in
            try withCStrings(config.subjects) { (subjects) throws(NatsError) in
                cfg.Name = name
                cfg.Subjects = subjects
                cfg.SubjectsLen = Int32(config.subjects.count)
                cfg.Storage = config.storage == .file ? js_FileStorage : js_MemoryStorage
                cfg.Replicas = Int64(config.replicas)
                cfg.Duplicates = config.duplicateWindow * 1_000_000
                cfg.MaxMsgsPerSubject = config.maxMessagesPerSubject
                cfg.MaxMsgSize = config.maxMessageSize
                cfg.AllowDirect = config.allowDirect
                var code = jsErrCode(rawValue: 0)
                try withC(config.description ?? "") { (description) throws(NatsError) in
                    if config.description != nil { cfg.Description = description }
                    try check(js_AddStream(nil, raw, &cfg, nil, &code), code, "making stream \(config.name)")
                }
            }
        }
    }

    /// Sets stream `name`'s message lifetime (ms; a key-value bucket's TTL),
    /// keeping the rest of its configuration and what it holds.
    public func setMaxAge(_ name: String, milliseconds: Int64) throws(NatsError) {
        var info: UnsafeMutablePointer<jsStreamInfo>? = nil
        var code = jsErrCode(rawValue: 0)
        try check(js_GetStreamInfo(&info, raw, name, nil, &code), code, "reading stream \(name)")
        guard let info, let config = info.pointee.Config else { throw NatsError(invalid: "no stream info") }
        defer { jsStreamInfo_Destroy(info) }
        config.pointee.MaxAge = milliseconds * 1_000_000
        // The server refuses a duplicates window longer than the max age (a KV
        // bucket's is its TTL): a shorter TTL shortens it too.
        if milliseconds > 0 && config.pointee.Duplicates > config.pointee.MaxAge {
            config.pointee.Duplicates = config.pointee.MaxAge
        }
        try check(js_UpdateStream(nil, raw, config, nil, &code), code, "updating stream \(name)")
    }

    /// What stream `name` is now.
    public func streamInfo(_ name: String) throws(NatsError) -> StreamInfo {
        var info: UnsafeMutablePointer<jsStreamInfo>? = nil
        var code = jsErrCode(rawValue: 0)
        try check(js_GetStreamInfo(&info, raw, name, nil, &code), code, "reading stream \(name)")
        guard let info else { throw NatsError(invalid: "no stream info") }
        defer { jsStreamInfo_Destroy(info) }
        let state = info.pointee.State
        var leader: String? = nil
        var replicas: [String] = []
        if let cluster = info.pointee.Cluster {
            leader = cluster.pointee.Leader.map { String(cString: $0) }
            if let leader { replicas.append(leader) }
            for index in 0..<Int(cluster.pointee.ReplicasLen) {
                if let peer = cluster.pointee.Replicas?[index], let name = peer.pointee.Name {
                    replicas.append(String(cString: name))
                }
            }
        }
        var result = StreamInfo(
            firstSequence: state.FirstSeq, lastSequence: state.LastSeq, messages: state.Msgs,
            bytes: state.Bytes, created: info.pointee.Created, leader: leader, replicas: replicas)
        if let config = info.pointee.Config {
            result.description = config.pointee.Description.map { String(cString: $0) }
            result.storage = config.pointee.Storage == js_MemoryStorage ? .memory : .file
            result.configuredReplicas = Int(config.pointee.Replicas)
            result.maxAge = config.pointee.MaxAge
        }
        return result
    }

    /// Deletes stream `name` (and its consumers).
    public func deleteStream(_ name: String) throws(NatsError) {
        var code = jsErrCode(rawValue: 0)
        try check(js_DeleteStream(raw, name, nil, &code), code, "deleting stream \(name)")
    }

    /// Deletes the messages of `stream` on `subject` before sequence `before`.
    public func purge(_ stream: String, subject: String, before: UInt64) throws(NatsError) {
        var opts = jsOptions()
        try check(jsOptions_Init(&opts), "making purge options")
        opts.Wait = wait
        var code = jsErrCode(rawValue: 0)
        try withC(subject) { (subjectPointer) throws(NatsError) in
            opts.Stream.Purge.Subject = subjectPointer
            opts.Stream.Purge.Sequence = before
            try check(js_PurgeStream(raw, stream, &opts, &code), code, "purging \(subject) of \(stream)")
        }
    }

    /// The last message of `stream` on `subject`, asked of the stream's leader;
    /// nil when there is none.
    public func lastMessage(_ stream: String, subject: String) throws(NatsError) -> NatsMessage? {
        var msg: OpaquePointer? = nil
        var code = jsErrCode(rawValue: 0)
        let status = js_GetLastMsg(&msg, raw, stream, subject, nil, &code)
        if status == NATS_NOT_FOUND || code.rawValue == 10037 { return nil }
        try check(status, code, "reading the last message on \(subject)")
        guard let msg else { return nil }
        defer { natsMsg_Destroy(msg) }
        return NatsMessage(copying: msg)
    }

    /// The message of `stream` at `sequence`; nil when there is none.
    public func message(_ stream: String, sequence: UInt64) throws(NatsError) -> NatsMessage? {
        var msg: OpaquePointer? = nil
        var code = jsErrCode(rawValue: 0)
        let status = js_GetMsg(&msg, raw, stream, sequence, nil, &code)
        if status == NATS_NOT_FOUND || code.rawValue == 10037 { return nil }
        try check(status, code, "reading message \(sequence) of \(stream)")
        guard let msg else { return nil }
        defer { natsMsg_Destroy(msg) }
        return NatsMessage(copying: msg)
    }

    /// The first message of `stream` on `subject` at or after `sequence` (a direct
    /// get: the stream must allow it); nil when there is none.
    public func nextMessage(_ stream: String, subject: String, from sequence: UInt64) throws(NatsError) -> NatsMessage?
    {
        var msg: OpaquePointer? = nil
        var dg = jsDirectGetMsgOptions()
        try check(jsDirectGetMsgOptions_Init(&dg), "making get options")
        return try withC(subject) { (subjectPointer) throws(NatsError) -> NatsMessage? in
            dg.Sequence = sequence
            dg.NextBySubject = subjectPointer
            let status = js_DirectGetMsg(&msg, raw, stream, nil, &dg)
            if status == NATS_NOT_FOUND { return nil }
            try check(status, "reading the message on \(subject) from \(sequence)")
            guard let msg else { return nil }
            defer { natsMsg_Destroy(msg) }
            var copy = NatsMessage(copying: msg)
            if let seq = copy.headers["Nats-Sequence"], let value = UInt64(seq) { copy.streamSequence = value }
            return copy
        }
    }

    // MARK: Consumers

    /// A durable pull consumer's settings.
    public struct ConsumerConfig: Sendable {
        public var durable: String
        public var filterSubject: String
        /// The first stream sequence it delivers.
        public var startSequence: UInt64 = 1
        /// Whether one ack covers every earlier delivery (else each is acked).
        public var ackAll = true
        /// How long a delivery waits for its ack before it is delivered again, ms.
        public var ackWait: Int64 = 30_000
        public var maxAckPending: Int64 = 20_000
        public var replicas: Int = 1
        public var memory = true

        public init(durable: String, filterSubject: String) {
            self.durable = durable
            self.filterSubject = filterSubject
        }
    }

    /// What a consumer is now.
    public struct ConsumerInfo: Sendable {
        public var delivered: UInt64
        public var ackFloor: UInt64
        public var pending: UInt64
        public var ackPending: Int64
        public var leader: String?
    }

    /// Makes a durable pull consumer on `stream`.
    public func addConsumer(_ stream: String, _ config: ConsumerConfig) throws(NatsError) {
        var cfg = jsConsumerConfig()
        try check(jsConsumerConfig_Init(&cfg), "making consumer options")
        try withC(config.durable) { (durable) throws(NatsError) in
            try withC(config.filterSubject) { (filter) throws(NatsError) in
                cfg.Durable = durable
                cfg.FilterSubject = filter
                cfg.AckPolicy = config.ackAll ? js_AckAll : js_AckExplicit
                cfg.AckWait = config.ackWait * 1_000_000
                cfg.MaxAckPending = config.maxAckPending
                cfg.Replicas = Int64(config.replicas)
                cfg.MemoryStorage = config.memory
                if config.startSequence > 1 {
                    cfg.DeliverPolicy = js_DeliverByStartSequence
                    cfg.OptStartSeq = config.startSequence
                } else {
                    cfg.DeliverPolicy = js_DeliverAll
                }
                var code = jsErrCode(rawValue: 0)
                try check(js_AddConsumer(nil, raw, stream, &cfg, nil, &code), code, "making consumer \(config.durable)")
            }
        }
    }

    /// Deletes consumer `name` of `stream`; a consumer that is not there is fine.
    public func deleteConsumer(_ stream: String, _ name: String) throws(NatsError) {
        var code = jsErrCode(rawValue: 0)
        let status = js_DeleteConsumer(raw, stream, name, nil, &code)
        if status == NATS_NOT_FOUND || code.rawValue == 10014 { return }
        try check(status, code, "deleting consumer \(name)")
    }

    /// What consumer `name` of `stream` is now.
    public func consumerInfo(_ stream: String, _ name: String) throws(NatsError) -> ConsumerInfo {
        var info: UnsafeMutablePointer<jsConsumerInfo>? = nil
        var code = jsErrCode(rawValue: 0)
        try check(js_GetConsumerInfo(&info, raw, stream, name, nil, &code), code, "reading consumer \(name)")
        guard let info else { throw NatsError(invalid: "no consumer info") }
        defer { jsConsumerInfo_Destroy(info) }
        let leader = info.pointee.Cluster?.pointee.Leader.map { String(cString: $0) }
        return ConsumerInfo(
            delivered: info.pointee.Delivered.Stream, ackFloor: info.pointee.AckFloor.Stream,
            pending: info.pointee.NumPending, ackPending: info.pointee.NumAckPending, leader: leader)
    }

    /// Binds a pull subscription to the existing durable `durable` of `stream`.
    /// `memory`: the consumer keeps its state in memory (nats.c checks it on binding).
    public func pullSubscribe(_ stream: String, durable: String, subject: String, memory: Bool = false)
        throws(NatsError) -> PullSubscription
    {
        var subOpts = jsSubOptions()
        try check(jsSubOptions_Init(&subOpts), "making subscription options")
        var sub: OpaquePointer? = nil
        var code = jsErrCode(rawValue: 0)
        try withC(stream) { (streamPointer) throws(NatsError) in
            try withC(durable) { (durablePointer) throws(NatsError) in
                subOpts.Stream = streamPointer
                subOpts.Consumer = durablePointer
                subOpts.ManualAck = true
                subOpts.Config.MemoryStorage = memory
                try check(
                    js_PullSubscribe(&sub, raw, subject, durable, nil, &subOpts, &code), code,
                    "binding to consumer \(durable)")
            }
        }
        guard let sub else { throw NatsError(invalid: "nats.c made no subscription") }
        return PullSubscription(raw: sub, jetStream: self)
    }
}

/// A pull subscription: messages come when asked for.
public final class PullSubscription: @unchecked Sendable {
    let raw: OpaquePointer
    let jetStream: JetStream

    init(raw: OpaquePointer, jetStream: JetStream) {
        self.raw = raw
        self.jetStream = jetStream
    }

    deinit {
        natsSubscription_Unsubscribe(raw)
        natsSubscription_Destroy(raw)
    }

    /// Asks for up to `batch` messages and waits up to `timeout` ms for them: what
    /// came by then (maybe none). The server sends a heartbeat every `heartbeat`
    /// ms while it has nothing, so a dead request is noticed.
    public func fetch(batch: Int, timeout: Int64, heartbeat: Int64 = 0) throws(NatsError) -> [NatsMessage] {
        var request = jsFetchRequest()
        try check(jsFetchRequest_Init(&request), "making a fetch request")
        request.Batch = Int32(batch)
        request.Expires = timeout * 1_000_000
        if heartbeat > 0 && heartbeat * 2 < timeout { request.Heartbeat = heartbeat * 1_000_000 }
        var list = natsMsgList()
        let status = natsSubscription_FetchRequest(&list, raw, &request)
        defer { natsMsgList_Destroy(&list) }
        if status == NATS_TIMEOUT { return [] }
        try check(status, "fetching")
        var messages: [NatsMessage] = []
        messages.reserveCapacity(Int(list.Count))
        for index in 0..<Int(list.Count) {
            if let msg = list.Msgs[index] { messages.append(NatsMessage(copying: msg, jetStream: true)) }
        }
        return messages
    }

    /// Acknowledges `message` (with an AckAll consumer, every earlier one too).
    public func ack(_ message: NatsMessage) throws(NatsError) {
        guard let reply = message.reply else { throw NatsError(invalid: "a message with no ack subject") }
        try jetStream.connection.publish(reply, Array("+ACK".utf8))
    }
}
