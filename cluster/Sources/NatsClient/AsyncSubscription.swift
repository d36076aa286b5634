import CNats

/// The handler of a subscription whose messages nats.c delivers on its own thread.
final class MessageHandlerBox: @unchecked Sendable {
    let handler: @Sendable (NatsMessage) -> Void
    init(_ handler: @escaping @Sendable (NatsMessage) -> Void) { self.handler = handler }
}

extension NatsConnection {
    /// Subscribes to `subject`; nats.c calls `handler` with each message, one at a
    /// time, on the subscription's own thread. What arrives while the handler is
    /// busy waits in the subscription's queue (``Subscription/setPendingLimits(messages:bytes:)``
    /// bounds it; beyond, messages are dropped and ``Events/slowConsumer`` is told).
    public func subscribe(_ subject: String, handler: @escaping @Sendable (NatsMessage) -> Void) throws(NatsError)
        -> Subscription
    {
        // Retained until nats.c says the subscription's last callback has returned.
        let box = Unmanaged.passRetained(MessageHandlerBox(handler))
        var sub: OpaquePointer? = nil
        let status = natsConnection_Subscribe(
            &sub, raw, subject,
            { _, _, msg, closure in
                guard let msg else { return }
                defer { natsMsg_Destroy(msg) }
                guard let closure else { return }
                let message = NatsMessage(copying: msg)
                Unmanaged<MessageHandlerBox>.fromOpaque(closure).takeUnretainedValue().handler(message)
            }, box.toOpaque())
        guard status == NATS_OK, let sub else {
            box.release()
            throw NatsError(status == NATS_OK ? NATS_ERR : status, doing: "subscribing to \(subject)")
        }
        let completed = natsSubscription_SetOnCompleteCB(
            sub,
            { closure in
                guard let closure else { return }
                Unmanaged<MessageHandlerBox>.fromOpaque(closure).release()
            }, box.toOpaque())
        if completed != NATS_OK {
            // Without the callback the box stays for good: a small leak, never a dangling handler.
            _ = box.retain()
        }
        return Subscription(raw: sub, connection: self)
    }
}

extension Subscription {
    /// Messages received and not yet read (or, for a handler, not yet handed to it).
    public var pendingMessages: Int {
        var messages: Int32 = 0
        var bytes: Int32 = 0
        guard natsSubscription_GetPending(raw, &messages, &bytes) == NATS_OK else { return 0 }
        return Int(messages)
    }
}
