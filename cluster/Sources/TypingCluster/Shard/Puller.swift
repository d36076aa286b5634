import NatsClient

/// The owner's pull on its durable consumer, on one inbox for the consumer's
/// life: requests of `batch` messages (living 10 s, a heartbeat every second
/// while idle), deliveries taken as they arrive, up to a batch at once.
///
/// A new request goes out once half a batch was delivered since the last one,
/// and, by this side's clock, before the last one can expire: nats-server 2.9
/// drops an expired request without a word when a message comes for it before
/// its expiry timer runs (the 408 that ends a request is sent only by the
/// timer), so a client that waited for the 408 to ask again would be left with
/// no request and no heartbeat until it noticed the silence. Ended requests
/// (408) therefore change nothing here; more requests than needed are harmless
/// (each ends by itself).
///
/// It throws (for the caller's back-off) when a request ended otherwise than by
/// expiring (409 and the like), and when nothing, not even a heartbeat, was heard
/// for two heartbeats although a request is live (a reconnect, the consumer's
/// node gone).
package final class Puller {
    package static let expires: Int64 = 10_000
    package static let heartbeat: Int64 = 1_000
    static let maxBytes = 64 << 20
    /// A request is renewed this long before it expires, by this side's clock.
    package static let renewBefore: Int64 = 2 * heartbeat

    let inbox: PullInbox
    /// When the last request went out (0: none yet), and messages delivered since.
    var askedAt: Int64 = 0
    var deliveredSince = 0
    var heard = monotonicNanos()
    var trouble: String? = nil

    init(_ inbox: PullInbox) {
        self.inbox = inbox
    }

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// Whether a new request is due: none yet, half a batch delivered since the
    /// last, or the last about to expire.
    package static func mustAsk(askedAt: Int64, deliveredSince: Int, batch: Int, now: Int64) -> Bool {
        askedAt == 0 || deliveredSince >= max(1, batch / 2) || now - askedAt >= (expires - renewBefore) * 1_000_000
    }

    /// At most `batch` delivered messages, in order; [] when woken for nothing.
    func next(batch: Int, wait: Int64) throws -> [NatsMessage] {
        let now = monotonicNanos()
        if Self.mustAsk(askedAt: askedAt, deliveredSince: deliveredSince, batch: batch, now: now) {
            if askedAt == 0 { heard = now }
            try inbox.request(batch: batch, expires: Self.expires, heartbeat: Self.heartbeat, maxBytes: Self.maxBytes)
            askedAt = now
            deliveredSince = 0
        }
        let waitingSince = monotonicNanos()
        var taken: [NatsMessage] = []
        while taken.count < batch {
            guard let delivery = try inbox.next(timeout: taken.isEmpty ? wait : 0) else { break }
            heard = monotonicNanos()
            switch delivery {
            case .message(let message):
                deliveredSince += 1
                taken.append(message)
            case .status(let code, let description, _):
                if code == 100 || code == 408 {
                    // A heartbeat, or a request that ended: a live one is kept by time.
                    if taken.isEmpty { return [] } else { continue }
                }
                trouble = "\(code) \(description)"
                // Ask again at once: the request that ended may have been the live one.
                askedAt = 0
                if taken.isEmpty { break }
            }
            if taken.isEmpty { break }
        }
        if taken.isEmpty {
            if let trouble {
                self.trouble = nil
                throw Failed(description: "the pull ended: \(trouble)")
            }
            if heard < waitingSince && monotonicNanos() - heard >= 2 * Self.heartbeat * 1_000_000 {
                askedAt = 0
                throw Failed(description: "nothing from the consumer for \((monotonicNanos() - heard) / 1_000_000) ms")
            }
            return []
        }
        trouble = nil
        return taken
    }
}
