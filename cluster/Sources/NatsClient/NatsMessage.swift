import CNats
#if canImport(Glibc)
import Glibc
#endif

/// A message, copied out of nats.c: subject, reply, headers and body. What a
/// JetStream delivery adds (sequences, deliveries, pending) is read once.
public struct NatsMessage: Sendable {
    /// The subject it was published on.
    public var subject: String
    /// The reply subject, if any (a JetStream delivery's is where its ack goes).
    public var reply: String?
    /// The headers, each key once (the last value kept).
    public var headers: [String: String]
    /// The body.
    public var data: [UInt8]
    /// The stream sequence: of a JetStream delivery, or of a message read from a
    /// stream by sequence or subject. 0 for a plain message.
    public var streamSequence: UInt64 = 0
    /// The consumer's delivery sequence (JetStream deliveries only).
    public var consumerSequence: UInt64 = 0
    /// How many times it was delivered (JetStream deliveries only).
    public var deliveries: UInt64 = 0
    /// How many messages the consumer had left after this one (deliveries only).
    public var pending: UInt64 = 0

    /// A message to publish.
    public init(subject: String, reply: String? = nil, headers: [String: String] = [:], data: [UInt8]) {
        self.subject = subject
        self.reply = reply
        self.headers = headers
        self.data = data
    }

    /// Copies `msg` (which stays the caller's).
    init(copying msg: OpaquePointer, jetStream: Bool = false) {
        subject = natsMsg_GetSubject(msg).map { String(cString: $0) } ?? ""
        reply = natsMsg_GetReply(msg).map { String(cString: $0) }
        let count = Int(natsMsg_GetDataLength(msg))
        if count > 0, let bytes = natsMsg_GetData(msg) {
            data = Array(UnsafeRawBufferPointer(start: bytes, count: count))
        } else {
            data = []
        }
        headers = [:]
        var keys: UnsafeMutablePointer<UnsafePointer<CChar>?>? = nil
        var keyCount: Int32 = 0
        if natsMsgHeader_Keys(msg, &keys, &keyCount) == NATS_OK, let keys {
            for index in 0..<Int(keyCount) {
                guard let key = keys[index] else { continue }
                var value: UnsafePointer<CChar>? = nil
                if natsMsgHeader_Get(msg, key, &value) == NATS_OK, let value {
                    headers[String(cString: key)] = String(cString: value)
                }
            }
            free(keys)
        }
        if jetStream {
            var meta: UnsafeMutablePointer<jsMsgMetaData>? = nil
            if natsMsg_GetMetaData(&meta, msg) == NATS_OK, let meta {
                streamSequence = meta.pointee.Sequence.Stream
                consumerSequence = meta.pointee.Sequence.Consumer
                deliveries = meta.pointee.NumDelivered
                pending = meta.pointee.NumPending
                jsMsgMetaData_Destroy(meta)
            }
        } else {
            streamSequence = natsMsg_GetSequence(msg)
        }
    }

    /// The body as text (invalid UTF-8 repaired), for logs and JSON.
    public var text: String { String(decoding: data, as: UTF8.self) }
}

/// Makes a nats.c message of `message` for the duration of `body`.
func withCMessage<R>(_ message: NatsMessage, _ body: (OpaquePointer) throws(NatsError) -> R) throws(NatsError) -> R {
    var msg: OpaquePointer? = nil
    let status = message.data.withUnsafeBytes { bytes in
        natsMsg_Create(
            &msg, message.subject, message.reply,
            bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
    }
    try check(status, "making a message for \(message.subject)")
    guard let msg else { throw NatsError(invalid: "nats.c made no message") }
    defer { natsMsg_Destroy(msg) }
    for (key, value) in message.headers {
        try check(natsMsgHeader_Set(msg, key, value), "setting header \(key)")
    }
    return try body(msg)
}
