import Foundation
import NatsClient
import Synchronization

/// Partition P's lease: key `pP` of the KV bucket ``Names/leaseBucket``. Taken with
/// create (its revision is the owner's epoch: it grows with every new owner),
/// renewed with update(last: revision) every second (TTL/3 if shorter). The lease is held until TTL
/// after the last good renewal was *sent*: before the key can lapse on the
/// server. The watchdog ends the process (status 75) the moment that time passes,
/// whatever the other threads are doing; every publish checks ``held``.
public final class Lease: Sendable {
    public let key: String
    public let ttl: Double
    let kv: KeyValue
    let value: [UInt8]
    public let owner: String
    /// The revision of our create: 0 while a standby.
    public let epochValue = Atomic<UInt64>(0)
    /// Monotonic ns until which the lease is ours.
    let validUntil = Atomic<Int64>(0)
    let revision = Atomic<UInt64>(0)
    let released = Atomic<Bool>(false)
    public let renewals = Atomic<Int>(0)
    let log: @Sendable (String) -> Void

    public var epoch: UInt64 { epochValue.load(ordering: .acquiring) }

    public init(kv: KeyValue, partition: Int, ttl: Double, log: @escaping @Sendable (String) -> Void) {
        self.kv = kv
        key = Names.leaseKey(partition)
        self.ttl = ttl
        owner = "\(hostName()):\(getpid()):\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        value = Array("{\"owner\":\"\(owner)\",\"partition\":\(partition)}".utf8)
        self.log = log
    }

    /// Whether the lease is ours now.
    @inline(__always)
    public var held: Bool {
        epochValue.load(ordering: .relaxed) > 0 && !released.load(ordering: .relaxed)
            && monotonicNanos() < validUntil.load(ordering: .acquiring)
    }

    /// The holder's value, if the key has one.
    public func holder() -> String? {
        (try? kv.get(key)).flatMap { $0 }.map { String(decoding: $0.value, as: UTF8.self) }
    }

    /// The holder's id (host, pid, a random part), if the key has a value that
    /// names one.
    public func holderID() -> String? {
        guard let entry = (try? kv.get(key)).flatMap({ $0 }),
            let object = try? JSONSerialization.jsonObject(with: Data(entry.value)) as? [String: Any]
        else { return nil }
        return object["owner"] as? String
    }

    /// One try to take the lease: true when it is ours.
    public func tryCreate() throws -> Bool {
        let sent = monotonicNanos()
        do {
            let taken = try kv.create(key, value)
            took(taken, sent: sent)
            return true
        } catch let error where error.isWrongRevision {
            // Held; or our own create was stored and its reply lost.
            if let entry = try kv.get(key), entry.value == value {
                took(entry.revision, sent: sent)
                return true
            }
            return false
        }
    }

    func took(_ taken: UInt64, sent: Int64) {
        revision.store(taken, ordering: .releasing)
        validUntil.store(sent + Int64(ttl * 1e9), ordering: .releasing)
        epochValue.store(taken, ordering: .releasing)
        log("lease \(key) taken, epoch \(taken)")
    }

    /// Renews every second (TTL/3 if shorter) until released; the lease is lost (``fence``) once TTL
    /// passed since the last good renewal was sent. Runs on its own thread.
    public func keep(fence: @escaping (String) -> Never) {
        // Every second (a third of the TTL if shorter): the lease then survives
        // renewals failing for TTL less one second.
        let interval = min(ttl / 3, 1.0)
        var next = validUntil.load(ordering: .acquiring) - Int64(ttl * 1e9) + Int64(interval * 1e9)
        var failingSince: Int64? = nil
        while !released.load(ordering: .acquiring) {
            let wait = next - monotonicNanos()
            if wait > 0 { pause(.nanoseconds(wait)) }
            if released.load(ordering: .acquiring) { return }
            let sent = monotonicNanos()
            if sent >= validUntil.load(ordering: .acquiring) { fence("not renewed within \(ttl) s") }
            do {
                switch try renew() {
                case .renewed:
                    validUntil.store(sent + Int64(ttl * 1e9), ordering: .releasing)
                    renewals.add(1, ordering: .relaxed)
                    next = sent + Int64(interval * 1e9)
                    if let since = failingSince {
                        log(
                            "lease renewed again after \(String(format: "%.2f", Double(monotonicNanos() - since) / 1e9)) s"
                        )
                        failingSince = nil
                    }
                    continue
                case .lapsed:
                    fence("lease lapsed")
                case .taken(let other, let revision):
                    fence("lease taken by \(String(decoding: other, as: UTF8.self)) (epoch \(revision))")
                }
            } catch {
                if failingSince == nil {
                    failingSince = monotonicNanos()
                    log("lease renewal failed (\(error)); retrying")
                }
            }
            next = monotonicNanos() + 100_000_000
        }
    }

    /// One renewal (``KeyValue/renew(_:_:last:)``: a key at another revision that
    /// still holds this owner's value is still its lease); the revision is kept
    /// when it is.
    func renew() throws(NatsError) -> KeyRenewal {
        let found = try kv.renew(key, value, last: revision.load(ordering: .acquiring))
        if case .renewed(let renewed) = found { revision.store(renewed, ordering: .releasing) }
        return found
    }

    /// Ends the process the moment the lease's time is up, even while a renewal
    /// hangs. Runs on its own thread.
    public func watchdog(fence: @escaping (String) -> Never) {
        while !released.load(ordering: .acquiring) {
            let left = validUntil.load(ordering: .acquiring) - monotonicNanos()
            if left <= 0 { fence("not renewed within \(ttl) s") }
            pause(.nanoseconds(min(left, 50_000_000) + 1_000_000))
        }
    }

    /// Deletes the key (on SIGTERM): a standby takes over at once.
    public func release() {
        guard epoch > 0, !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        do {
            try kv.delete(key)
            log("lease \(key) released")
        } catch {
            log("could not release lease \(key) (\(error)); it lapses in \(ttl) s")
        }
    }
}
