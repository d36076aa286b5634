import CNats
#if canImport(Glibc)
import Glibc
#endif

/// A pull consumer read the way a busy owner wants it: requests kept outstanding
/// on one inbox, deliveries taken as they arrive (nats.c's fetch waits for the
/// whole batch or the request's end, so a paced partition would wait out every
/// request).
///
/// ``request(batch:expires:heartbeat:maxBytes:)`` asks for messages (reply to the
/// inbox); ``next(timeout:)`` gives the next delivery or status: a message of the
/// stream (with its sequences), or the end of a request (408 expired, 409, 404)
/// or a heartbeat (100).
public final class PullInbox: @unchecked Sendable {
    let raw: OpaquePointer
    public let connection: NatsConnection
    public let inbox: String
    let requestSubject: String

    /// What came to the inbox.
    public enum Delivery: Sendable {
        case message(NatsMessage)
        /// A request's end or a heartbeat: the status code, its description, and
        /// how many messages the request left undelivered (when said).
        case status(code: Int, description: String, pending: Int?)
    }

    /// Subscribes a new inbox for durable `durable` of `stream`.
    public init(_ connection: NatsConnection, stream: String, durable: String) throws(NatsError) {
        self.connection = connection
        inbox = connection.newInbox()
        requestSubject = "$JS.API.CONSUMER.MSG.NEXT.\(stream).\(durable)"
        var sub: OpaquePointer? = nil
        try check(natsConnection_SubscribeSync(&sub, connection.raw, inbox), "subscribing to \(inbox)")
        guard let sub else { throw NatsError(invalid: "nats.c made no subscription") }
        raw = sub
        _ = natsSubscription_SetPendingLimits(raw, -1, -1)
    }

    deinit {
        natsSubscription_Unsubscribe(raw)
        natsSubscription_Destroy(raw)
    }

    /// Asks for up to `batch` messages; the request lives `expires` ms, with a
    /// heartbeat every `heartbeat` ms while idle.
    public func request(batch: Int, expires: Int64, heartbeat: Int64, maxBytes: Int) throws(NatsError) {
        let body =
            "{\"batch\":\(batch),\"expires\":\(expires * 1_000_000),\"idle_heartbeat\":\(heartbeat * 1_000_000),\"max_bytes\":\(maxBytes)}"
        let bytes = Array(body.utf8)
        let status = bytes.withUnsafeBytes {
            natsConnection_PublishRequest(connection.raw, requestSubject, inbox, $0.baseAddress, Int32($0.count))
        }
        try check(status, "asking \(requestSubject)")
    }

    /// The next delivery, waiting up to `timeout` ms; nil when none came.
    public func next(timeout: Int64) throws(NatsError) -> Delivery? {
        var msg: OpaquePointer? = nil
        let status = natsSubscription_NextMsg(&msg, raw, timeout)
        if status == NATS_TIMEOUT { return nil }
        try check(status, "reading \(inbox)")
        guard let msg else { return nil }
        defer { natsMsg_Destroy(msg) }
        var value: UnsafePointer<CChar>? = nil
        if natsMsgHeader_Get(msg, "Status", &value) == NATS_OK, let value {
            let code = Int(String(cString: value)) ?? 0
            var description: UnsafePointer<CChar>? = nil
            var text = ""
            if natsMsgHeader_Get(msg, "Description", &description) == NATS_OK, let description {
                text = String(cString: description)
            }
            var pendingValue: UnsafePointer<CChar>? = nil
            var pending: Int? = nil
            if natsMsgHeader_Get(msg, "Nats-Pending-Messages", &pendingValue) == NATS_OK, let pendingValue {
                pending = Int(String(cString: pendingValue))
            }
            return .status(code: code, description: text, pending: pending)
        }
        let message = NatsMessage(copying: msg, jetStream: true)
        if message.reply?.hasPrefix("$JS.ACK.") != true {
            return .status(
                code: 0, description: "an answer that is not a delivery: \(String(message.text.prefix(200)))",
                pending: nil)
        }
        return .message(message)
    }

    /// Acknowledges `message` (AckAll: every earlier one too).
    public func ack(_ message: NatsMessage) throws(NatsError) {
        guard let reply = message.reply else { throw NatsError(invalid: "a message with no ack subject") }
        try connection.publish(reply, Array("+ACK".utf8))
    }
}
