import NatsClient

/// The owner's pull on its durable consumer, on one inbox for the consumer's
/// life: requests of `batch` messages (living 10 s, a heartbeat every second
/// while idle) kept outstanding, a new one once less than half of what was asked
/// is still owed or a request ended; deliveries taken as they arrive, up to a
/// batch at once. It throws (for the caller's back-off) when a request ended
/// otherwise than by expiring with nothing delivered, and when nothing, not even
/// a heartbeat, was heard for two heartbeats while messages are owed (a
/// reconnect, the consumer's node gone).
final class Puller {
    static let expires: Int64 = 10_000
    static let heartbeat: Int64 = 1_000
    static let maxBytes = 64 << 20

    let inbox: PullInbox
    var owed = 0
    var heard = monotonicNanos()
    var trouble: String? = nil

    init(_ inbox: PullInbox) {
        self.inbox = inbox
    }

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// At most `batch` delivered messages, in order; [] when woken for nothing.
    func next(batch: Int, wait: Int64) throws -> [NatsMessage] {
        if owed <= batch / 2 {
            if owed <= 0 { heard = monotonicNanos() }
            try inbox.request(batch: batch, expires: Self.expires, heartbeat: Self.heartbeat, maxBytes: Self.maxBytes)
            owed += batch
        }
        let waitingSince = monotonicNanos()
        var taken: [NatsMessage] = []
        while taken.count < batch {
            guard let delivery = try inbox.next(timeout: taken.isEmpty ? wait : 0) else { break }
            heard = monotonicNanos()
            switch delivery {
            case .message(let message):
                owed -= 1
                taken.append(message)
            case .status(let code, let description, let pending):
                if code == 100 { if taken.isEmpty { return [] } else { continue } }
                owed = max(0, owed - (pending ?? owed))
                if code != 408 { trouble = "\(code) \(description)" }
                if taken.isEmpty && code != 0 { break }
            }
            if taken.isEmpty { break }
        }
        if taken.isEmpty {
            if let trouble {
                self.trouble = nil
                throw Failed(description: "the pull ended: \(trouble)")
            }
            if owed > 0 && heard < waitingSince && monotonicNanos() - heard >= 2 * Self.heartbeat * 1_000_000 {
                owed = 0
                throw Failed(description: "nothing from the consumer for \((monotonicNanos() - heard) / 1_000_000) ms")
            }
            return []
        }
        trouble = nil
        return taken
    }
}
