import CNats
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A connection to a NATS cluster (nats.c's `natsConnection`), which reconnects by
/// itself, for ever, to any of the servers it was given.
///
/// A dead server is noticed within ``Options/pingInterval`` × (``Options/maxPingsOut`` + 1):
/// nats.c pings the server every interval and gives the connection up when that
/// many pings go unanswered, then moves to another server. nats.c's own default
/// interval is two minutes: a frozen node would stall its clients that long.
public final class NatsConnection: @unchecked Sendable {
    /// How to connect.
    public struct Options: Sendable {
        /// `nats://host:port` of each server.
        public var servers: [String]
        /// The connection's name, as the servers show it.
        public var name: String
        /// How often to ping the server, in milliseconds.
        public var pingInterval: Int64
        /// Unanswered pings after which the server is taken for dead.
        public var maxPingsOut: Int32
        /// How long connecting to one server may take, in milliseconds.
        public var connectTimeout: Int64
        /// The wait between two rounds of reconnecting, in milliseconds.
        public var reconnectWait: Int64
        /// Whether a first connect that fails keeps trying in the background
        /// (the init then returns at once).
        public var retryFirstConnect: Bool
        /// Whether the servers are tried in the order given (else shuffled, as
        /// nats.c does by default, to spread clients over the nodes).
        public var inOrder = false

        /// The defaults: a ping every second, dead after 2 unanswered (about 2 s
        /// to notice, within two ping intervals).
        public init(
            servers: [String], name: String, pingInterval: Int64 = 1000, maxPingsOut: Int32 = 2,
            connectTimeout: Int64 = 2000, reconnectWait: Int64 = 250, retryFirstConnect: Bool = false
        ) {
            self.servers = servers
            self.name = name
            self.pingInterval = pingInterval
            self.maxPingsOut = maxPingsOut
            self.connectTimeout = connectTimeout
            self.reconnectWait = reconnectWait
            self.retryFirstConnect = retryFirstConnect
        }
    }

    /// What the connection tells as it happens, on nats.c's threads.
    public final class Events: @unchecked Sendable {
        /// The connection to a server was lost (not told when ``close()`` ends it).
        public var disconnected: (@Sendable () -> Void)?
        /// Set by ``close()``: the disconnection that follows is not a loss.
        let closing = Atomic<Bool>(false)
        /// The connection is back (messages may have been lost meanwhile).
        public var reconnected: (@Sendable () -> Void)?
        /// A subscription's messages were dropped: its reader is too slow.
        public var slowConsumer: (@Sendable () -> Void)?
        /// Any other asynchronous error.
        public var error: (@Sendable (String) -> Void)?

        public init() {}
    }

    let raw: OpaquePointer
    /// The options it was made with.
    public let options: Options
    let events: Events

    /// Connects (to the first server that answers).
    public init(_ options: Options, events: Events = Events()) throws(NatsError) {
        self.options = options
        self.events = events
        var opts: OpaquePointer? = nil
        try check(natsOptions_Create(&opts), "making connection options")
        guard let opts else { throw NatsError(invalid: "nats.c made no options") }
        defer { natsOptions_Destroy(opts) }
        if options.servers.isEmpty { throw NatsError(invalid: "no server given") }
        try withCStrings(options.servers) { (list) throws(NatsError) in
            try check(natsOptions_SetServers(opts, list, Int32(options.servers.count)), "setting the servers")
        }
        try check(natsOptions_SetName(opts, options.name), "naming the connection")
        try check(natsOptions_SetNoRandomize(opts, options.inOrder), "ordering the servers")
        try check(natsOptions_SetPingInterval(opts, options.pingInterval), "setting the ping interval")
        try check(natsOptions_SetMaxPingsOut(opts, options.maxPingsOut), "setting the pings out")
        try check(natsOptions_SetTimeout(opts, options.connectTimeout), "setting the connect timeout")
        try check(natsOptions_SetAllowReconnect(opts, true), "allowing reconnects")
        try check(natsOptions_SetMaxReconnect(opts, -1), "reconnecting for ever")
        try check(natsOptions_SetReconnectWait(opts, options.reconnectWait), "setting the reconnect wait")
        // What is published while disconnected waits in nats.c (8 MiB), then fails.
        try check(natsOptions_SetReconnectBufSize(opts, 8 << 20), "setting the reconnect buffer")
        // The handlers live until nats.c's last callback for the connection, the
        // closed one (which nats.c may call after this object is gone): retained
        // here, released there.
        let closure = Unmanaged.passRetained(events).toOpaque()
        var handedOver = false
        defer { if !handedOver { Unmanaged<Events>.fromOpaque(closure).release() } }
        try check(
            natsOptions_SetClosedCB(
                opts,
                { _, closure in
                    guard let closure else { return }
                    Unmanaged<Events>.fromOpaque(closure).release()
                }, closure), "setting the closed handler")
        try check(
            natsOptions_SetDisconnectedCB(
                opts,
                { _, closure in
                    guard let closure else { return }
                    let events = Unmanaged<Events>.fromOpaque(closure).takeUnretainedValue()
                    if !events.closing.load(ordering: .acquiring) { events.disconnected?() }
                }, closure), "setting the disconnect handler")
        try check(
            natsOptions_SetReconnectedCB(
                opts,
                { _, closure in
                    guard let closure else { return }
                    Unmanaged<Events>.fromOpaque(closure).takeUnretainedValue().reconnected?()
                }, closure), "setting the reconnect handler")
        try check(
            natsOptions_SetErrorHandler(
                opts,
                { _, _, status, closure in
                    guard let closure else { return }
                    let events = Unmanaged<Events>.fromOpaque(closure).takeUnretainedValue()
                    if status == NATS_SLOW_CONSUMER {
                        events.slowConsumer?()
                    } else {
                        events.error?(String(cString: natsStatus_GetText(status)))
                    }
                }, closure), "setting the error handler")
        if options.retryFirstConnect {
            try check(natsOptions_SetRetryOnFailedConnect(opts, true, nil, nil), "retrying the first connect")
        }
        var nc: OpaquePointer? = nil
        let status = natsConnection_Connect(&nc, opts)
        if status != NATS_OK && !(options.retryFirstConnect && status == NATS_NOT_YET_CONNECTED) {
            throw NatsError(status, doing: "connecting to \(options.servers.joined(separator: ","))")
        }
        guard let nc else { throw NatsError(invalid: "nats.c made no connection") }
        raw = nc
        handedOver = true
    }

    deinit {
        natsConnection_Destroy(raw)
    }

    /// Closes the connection (what was published and not yet sent is flushed
    /// first, within nats.c's timeout).
    public func close() {
        events.closing.store(true, ordering: .releasing)
        natsConnection_Close(raw)
    }

    /// Publishes `message` (with its headers, if any). Returns once nats.c has it
    /// in its buffer: ``flush(timeout:)`` waits until the server has it.
    public func publish(_ message: NatsMessage) throws(NatsError) {
        if message.headers.isEmpty && message.reply == nil {
            try publish(message.subject, message.data)
            return
        }
        try withCMessage(message) { (msg) throws(NatsError) in
            try check(natsConnection_PublishMsg(raw, msg), "publishing on \(message.subject)")
        }
    }

    /// Publishes `data` on `subject`, with no header.
    public func publish(_ subject: String, _ data: [UInt8]) throws(NatsError) {
        let status = data.withUnsafeBytes { natsConnection_Publish(raw, subject, $0.baseAddress, Int32($0.count)) }
        try check(status, "publishing on \(subject)")
    }

    /// Sends `message` and waits up to `timeout` ms for one reply.
    public func request(_ message: NatsMessage, timeout: Int64) throws(NatsError) -> NatsMessage {
        try withCMessage(message) { (msg) throws(NatsError) -> NatsMessage in
            var reply: OpaquePointer? = nil
            try check(natsConnection_RequestMsg(&reply, raw, msg, timeout), "asking \(message.subject)")
            guard let reply else { throw NatsError(invalid: "no reply") }
            defer { natsMsg_Destroy(reply) }
            if natsMsg_IsNoResponders(reply) { throw NatsError(NATS_NO_RESPONDERS, doing: "asking \(message.subject)") }
            return NatsMessage(copying: reply)
        }
    }

    /// Subscribes to `subject` (with a queue group, if given); read with
    /// ``Subscription/next(timeout:)``.
    public func subscribe(_ subject: String, queue: String? = nil) throws(NatsError) -> Subscription {
        var sub: OpaquePointer? = nil
        if let queue {
            try check(natsConnection_QueueSubscribeSync(&sub, raw, subject, queue), "subscribing to \(subject)")
        } else {
            try check(natsConnection_SubscribeSync(&sub, raw, subject), "subscribing to \(subject)")
        }
        guard let sub else { throw NatsError(invalid: "nats.c made no subscription") }
        return Subscription(raw: sub, connection: self)
    }

    /// Waits up to `timeout` ms until the server has everything published so far.
    public func flush(timeout: Int64) throws(NatsError) {
        try check(natsConnection_FlushTimeout(raw, timeout), "flushing")
    }

    /// The server it is connected to now, if any.
    public var connectedURL: String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard natsConnection_GetConnectedUrl(raw, &buffer, buffer.count) == NATS_OK else { return nil }
        let url = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return url.isEmpty ? nil : url
    }

    /// Whether it is connected now (not reconnecting, not closed).
    public var isConnected: Bool { natsConnection_Status(raw) == NATS_CONN_STATUS_CONNECTED }

    /// The largest message body the servers accept.
    public var maxPayload: Int { Int(natsConnection_GetMaxPayload(raw)) }

    /// A new unique inbox subject.
    public func newInbox() -> String {
        var inbox: UnsafeMutablePointer<CChar>? = nil
        guard natsInbox_Create(&inbox) == NATS_OK, let inbox else { return "_INBOX.typingd" }
        defer { natsInbox_Destroy(inbox) }
        return String(cString: inbox)
    }
}

/// A subscription read by its owner's thread.
public final class Subscription: @unchecked Sendable {
    let raw: OpaquePointer
    let connection: NatsConnection

    init(raw: OpaquePointer, connection: NatsConnection) {
        self.raw = raw
        self.connection = connection
    }

    deinit {
        natsSubscription_Unsubscribe(raw)
        natsSubscription_Destroy(raw)
    }

    /// The next message, waiting up to `timeout` ms; nil when none came.
    public func next(timeout: Int64) throws(NatsError) -> NatsMessage? {
        var msg: OpaquePointer? = nil
        let status = natsSubscription_NextMsg(&msg, raw, timeout)
        if status == NATS_TIMEOUT { return nil }
        try check(status, "reading a subscription")
        guard let msg else { return nil }
        defer { natsMsg_Destroy(msg) }
        return NatsMessage(copying: msg)
    }

    /// Bounds what waits unread: beyond it messages are dropped and the
    /// connection's ``NatsConnection/Events/slowConsumer`` is told.
    public func setPendingLimits(messages: Int32, bytes: Int32) throws(NatsError) {
        try check(natsSubscription_SetPendingLimits(raw, messages, bytes), "bounding a subscription")
    }

    /// How many messages were dropped so far.
    public var dropped: Int64 {
        var count: Int64 = 0
        _ = natsSubscription_GetDropped(raw, &count)
        return count
    }

    /// Stops it (messages already queued can still be read).
    public func unsubscribe() {
        natsSubscription_Unsubscribe(raw)
    }
}
