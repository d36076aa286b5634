import Foundation
import NatsClient

/// Why a router cannot run.
public enum RouterFailure: Error, CustomStringConvertible {
    /// Another router runs with this name.
    case nameTaken(name: String, holder: String)
    /// The input is not the one the checkpoint was made on, or it broke.
    case input(String)
    /// A checkpoint that does not fit the configuration.
    case checkpoint(String)

    public var description: String {
        switch self {
        case let .nameTaken(name, holder):
            return "--name \(name) is taken: a router with that name runs (\(holder)). Two routers with one name "
                + "would number their lines alike, and the shards would drop one's lines as the other's: give this "
                + "input another --name, or stop that router first (a router killed without stopping frees its "
                + "name \(Names.routerNameTTL / 1000) s after it last renewed it, at once when it ran on this host)"
        case let .input(text), let .checkpoint(text):
            return text
        }
    }

    /// The exit status: 75 for a name that frees itself later, 1 for a broken
    /// input, 64 for options that do not fit the checkpoint.
    public var exitStatus: Int32 {
        switch self {
        case .nameTaken: return 75
        case .input: return 1
        case .checkpoint: return 64
        }
    }
}

/// A router's hold on its name: key NAME of ``Names/routerNameBucket``, made
/// with create-if-absent and renewed by revision. Lines are published only while
/// the hold is sure (renewed less than the TTL ago, counted from when the renewal
/// was sent); a router that finds its key taken by another stops at once.
final class NameFence: @unchecked Sendable {
    let kv: KeyValue
    let name: String
    let ttl: Double
    let value: [UInt8]
    let lock = NSCondition()
    var revision: UInt64
    var lastGoodSent: Double
    var renewals = 0
    var released = false

    init(kv: KeyValue, name: String, ttl: Double, value: [UInt8], revision: UInt64, sent: Double) {
        self.kv = kv
        self.name = name
        self.ttl = ttl
        self.value = value
        self.revision = revision
        lastGoodSent = sent
    }

    /// What a holder's key says: `{"pid":…,"host":…,"started":…}`.
    static func describe(_ value: [UInt8]) -> (text: String, pid: Int32?, host: String?) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(value)) as? [String: Any] else {
            return ("holder unknown", nil, nil)
        }
        let pid = (object["pid"] as? NSNumber).map { $0.int32Value }
        let host = object["host"] as? String
        return ("pid \(pid.map(String.init) ?? "?") on \(host ?? "?")", pid, host)
    }

    /// Takes the name, or throws ``RouterFailure/nameTaken(name:holder:)``. A key
    /// left by a router of this host whose process is gone is taken over at once.
    static func take(_ kv: KeyValue, name: String, ttl: Double) throws -> NameFence {
        let host = hostName()
        let object: [String: Any] = ["pid": Int(getpid()), "host": host, "started": wallMilliseconds()]
        let value = Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
        let sent = monotonicSeconds()
        let created = Result { () throws(NatsError) -> UInt64 in try kv.create(name, value) }
        switch created {
        case .success(let revision):
            return NameFence(kv: kv, name: name, ttl: ttl, value: value, revision: revision, sent: sent)
        case .failure(let error):
            if !error.isWrongRevision { throw error }
        }
        guard let entry = try kv.get(name) else {
            // Gone between the two calls: try once more.
            let revision = try kv.create(name, value)
            return NameFence(kv: kv, name: name, ttl: ttl, value: value, revision: revision, sent: sent)
        }
        let holder = describe(entry.value)
        if holder.host == host, let pid = holder.pid, pid != getpid(), !isAlive(pid) {
            let revision = try kv.update(name, value, last: entry.revision)
            clusterLog("router", "--name \(name) was held by pid \(pid) of this host, which is gone: taken over")
            return NameFence(kv: kv, name: name, ttl: ttl, value: value, revision: revision, sent: monotonicSeconds())
        }
        throw RouterFailure.nameTaken(name: name, holder: holder.text)
    }

    /// Whether process `pid` of this host runs (a zombie, killed and not yet
    /// reaped, does not).
    static func isAlive(_ pid: Int32) -> Bool {
        if kill(pid, 0) != 0 && errno == ESRCH { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }

    /// Whether lines may be published now.
    var held: Bool { monotonicSeconds() - lastGoodSent < ttl * 0.9 }

    /// Waits while the hold is not sure (an outage); never returns to a router
    /// whose name was taken (it exits, status 75).
    func waitUntilHeld() {
        lock.lock()
        while !(monotonicSeconds() - lastGoodSent < ttl * 0.9) {
            _ = lock.wait(until: Date(timeIntervalSinceNow: 0.1))
        }
        lock.unlock()
    }

    /// Renews every second (a third of the TTL if shorter) until released.
    func keep() {
        var logged = monotonicSeconds()
        var failingSince: Double? = nil
        while true {
            pause(.seconds(min(ttl / 3, 1)))
            lock.lock()
            if released { lock.unlock(); return }
            let last = revision
            lock.unlock()
            let sent = monotonicSeconds()
            do {
                let next: UInt64
                switch try renew(last: last) {
                case .renewed(let revision):
                    next = revision
                case .taken(let holder):
                    clusterLog(
                        "router",
                        "--name \(name) was taken by another router (\(holder)) while this one "
                            + "could not renew it: stopping at once, without publishing more (exit 75); what "
                            + "this one stored is in the stream, and its checkpoint is the other's now")
                    exit(75)
                }
                lock.lock()
                revision = next
                lastGoodSent = sent
                renewals += 1
                lock.broadcast()
                lock.unlock()
                if let since = failingSince {
                    clusterLog("router", "name fence renewed after \(Int(monotonicSeconds() - since)) s")
                    failingSince = nil
                }
            } catch {
                if failingSince == nil { failingSince = sent }
                let now = monotonicSeconds()
                if now - logged >= 5 {
                    clusterLog(
                        "router",
                        "waiting for the cluster: name fence not renewed for \(Int(now - (failingSince ?? now))) s (\(error))"
                    )
                    logged = now
                }
            }
        }
    }

    /// What a renewal found.
    enum Renewal: Equatable {
        /// Held, at this revision.
        case renewed(UInt64)
        /// Another router holds the name (who).
        case taken(String)
    }

    /// Renews the key held at revision `last` (``KeyValue/renew(_:_:last:)``: a
    /// key at another revision that holds this router's own value is still its
    /// own). A key that lapsed (an outage longer than the TTL) is taken again,
    /// since nobody routed with this name meanwhile; a key holding another value
    /// is taken.
    func renew(last: UInt64) throws(NatsError) -> Renewal {
        var found = try kv.renew(name, value, last: last)
        var creates = 0
        while true {
            switch found {
            case .renewed(let revision): return .renewed(revision)
            case .taken(let other, _): return .taken(NameFence.describe(other).text)
            case .lapsed where creates == 2:
                return .taken("unknown: the name came and went twice while this router renewed it")
            case .lapsed: creates += 1
            }
            let created = Result { () throws(NatsError) -> UInt64 in try kv.create(name, value) }
            switch created {
            case .success(let revision): return .renewed(revision)
            case .failure(let error): if !error.isWrongRevision { throw error }
            }
            // Created meanwhile (by another router, or by our own create that timed out): look again.
            found = try kv.reclaim(name, value)
        }
    }

    /// Deletes the key: the name is free at once.
    func release() {
        lock.lock()
        released = true
        lock.unlock()
        try? kv.delete(name)
    }
}
