import Foundation
import NatsClient
import Synchronization
import TypingCore
@_spi(Daemon) import TypingProtocol

/// The shard was told to stop while it waited for the cluster.
struct Stopped: Error {}

/// The owner of one partition: holds its lease, consumes its commands, applies
/// them with typingd's engine in-process (``Session`` on the manual clock, no
/// drain, late `at` clamped), publishes the events, acknowledges. What it
/// guarantees is in cluster/README.md ("Takeover and retention", "Lease",
/// "Outages", "Clock", "Gateways").
public final class Shard: @unchecked Sendable {
    let config: ShardConfig
    let p: Int
    let subject: String
    let durable: String
    let connection: NatsConnection
    let js: JetStream
    let output: ShardOutput
    /// The engine's session, fed through typingd's parsing threads (a message of
    /// many lines is parsed on every core while the engine applies on this one).
    var pipeline: InputPipeline<ShardFormat, NoSink>
    var admission = Admission()
    var lease: Lease?
    var auditFD: Int32 = -1

    let stopping = Atomic<Bool>(false)
    let isOwner = Atomic<Bool>(false)
    let caughtUp = Atomic<Bool>(false)
    /// The partition's time after the last entry applied (the engine's clock).
    let clock = Atomic<Int>(0)
    let counts = Mutex(ShardCounts())
    let shown = Mutex(ShownTable())
    let started = monotonicNanos()
    let snapshotBusy = Atomic<Bool>(false)

    /// The last stream sequence applied (written to the engine).
    var written: UInt64 = 0
    /// Messages up to this were published by an earlier owner: applied silently.
    var published: UInt64 = 0
    /// The partition's last message when the catch-up began.
    var catchUpTarget: UInt64 = 0
    var sinceSnapshot = 0
    var streamCreated: Int64 = 0
    var maxPayload = 1 << 20
    var catchUpStarted: Int64 = 0
    var snapshotEvents = 0
    var snapshotBase: UInt64 = 0
    var replayed = 0
    var quiet = 0
    var puller: Puller?

    public init(config: ShardConfig) throws {
        self.config = config
        p = config.partition
        subject = Names.commandSubject(config.partition)
        durable = Names.consumer(config.partition)
        output = ShardOutput(partition: config.partition, buckets: config.buckets, audit: config.auditPath != nil)
        output.audienceOpen = config.audienceOpen
        var session = config.session
        session.clock = .manual
        session.drain = false
        session.engine.lateAt = .clamp
        pipeline = try InputPipeline.make(session: Session(configuration: session, format: ShardFormat(output: output), sink: NoSink()),
                                          threads: config.threads)
        var connectionOptions = NatsConnection.Options(
            servers: config.servers, name: "typingd shard \(config.partition)", pingInterval: config.pingMs,
            maxPingsOut: 2, retryFirstConnect: true)
        connectionOptions.inOrder = config.serversInOrder
        connection = try NatsConnection(connectionOptions)
        js = try JetStream(connection, wait: config.callTimeoutMs)
        if let path = config.auditPath {
            auditFD = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            if auditFD < 0 { throw StreamReadError(description: "--audit \(path): \(String(cString: strerror(errno)))") }
        }
    }

    // MARK: Logging, stopping

    func log(_ text: String) {
        Shard.log(partition: p, text)
    }

    static func log(partition: Int, _ text: String) {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        localtime_r(&seconds, &parts)
        let stamp = String(format: "%02d:%02d:%02d.%03d", parts.tm_hour, parts.tm_min, parts.tm_sec, spec.tv_nsec / 1_000_000)
        let line = "shard: \(stamp) partition \(partition): \(text)\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// Asks the shard to stop (SIGTERM): it finishes what it applies, releases the
    /// lease and returns 0.
    public func stop() {
        stopping.store(true, ordering: .releasing)
    }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Stops publishing at once: the process starts over as a standby (the same
    /// program and arguments, run again in place: nothing of the deposed owner's
    /// state survives), or ends with status 75 under --exit-on-lease-loss.
    func fence(_ why: String) -> Never {
        if config.exitOnLeaseLoss {
            log("lease \(Names.leaseKey(p)) lost (\(why)): stopped publishing; exiting 75")
            _exit(75)
        }
        log("lease \(Names.leaseKey(p)) lost (\(why)): stopped publishing; starting over as a standby")
        StartOver.now()
    }

    func sleep(seconds: Double) {
        let end = monotonicNanos() + Int64(seconds * 1e9)
        while !isStopping {
            let left = end - monotonicNanos()
            if left <= 0 { return }
            sleepNanos(min(left, 50_000_000))
        }
    }

    /// Calls the cluster until it answers: tries spaced by a back-off doubling to
    /// 2 s; only a stop ends it. With `missing`, a not-found answer is returned as nil.
    func call<T>(_ what: String, missing: Bool = false, _ body: () throws -> T) throws -> T? {
        var delay = 0.05
        var failingSince: Int64? = nil
        var logged: Int64 = 0
        while true {
            if isStopping { throw Stopped() }
            do {
                let result = try body()
                if let since = failingSince {
                    log("\(what): done after \(String(format: "%.1f", Double(monotonicNanos() - since) / 1e9)) s of retries")
                }
                return result
            } catch let error as NatsError where missing && error.isNotFound {
                return nil
            } catch {
                let now = monotonicNanos()
                counts.withLock { $0.retries += 1 }
                if failingSince == nil {
                    failingSince = now
                    logged = now
                    log("\(what) failed (\(error)); retrying")
                } else if now - logged >= 5_000_000_000 {
                    logged = now
                    log("\(what): waiting for the cluster for \(Int(Double(now - (failingSince ?? now)) / 1e9)) s")
                }
            }
            sleep(seconds: delay)
            delay = min(delay * 2, 2)
        }
    }

    // MARK: Run

    /// Runs until stopped (0), or the lease is lost (the process ends with 75).
    public func run() -> Int32 {
        let statsSubscriptions: [Subscription]
        do {
            statsSubscriptions = try [connection.subscribe(Names.statsSubject), connection.subscribe(Names.statsSubject(p))]
        } catch {
            log("cannot subscribe to the stats subjects: \(error)")
            return 1
        }
        for subscription in statsSubscriptions {
            spawn { [self] in serveStats(subscription) }
        }
        let lease: Lease
        do {
            guard let bound = try bindLease() else { return 0 }
            lease = bound
            self.lease = lease
            try acquire(lease)
        } catch {
            log("standby stopped")
            connection.close()
            return 0
        }
        isOwner.store(true, ordering: .releasing)
        spawn { [self] in lease.keep(fence: { self.fence($0) }) }
        spawn { [self] in lease.watchdog(fence: { self.fence($0) }) }
        log("engine in-process (manual clock, no drain, late at clamped), starting")
        do {
            try rebuild()
            if config.tickMs > 0 { spawn { [self] in ticker() } }
            try consume()
        } catch is Stopped {
        } catch {
            log("stopping: \(error)")
        }
        // Finish: a snapshot being stored gets its time.
        let deadline = monotonicNanos() + config.snapshotTimeoutMs * 1_000_000
        while snapshotBusy.load(ordering: .acquiring) && monotonicNanos() < deadline { sleepNanos(20_000_000) }
        try? connection.flush(timeout: 2000)
        lease.release()
        connection.close()
        let c = counts.withLock { $0 }
        log("stopped at seq \(written), \(c.eventsPublished) events in \(c.messagesPublished) messages published, \(c.droppedLines) lines deduplicated, \(c.snapshotsStored) snapshots stored (\(c.snapshotsFailed) failed, \(c.snapshotsSkipped) skipped), \(c.gapsFilled) messages taken from the stream (a lost delivery, a stall), \(c.ticks) ticks (\(c.ticksSkipped) not needed: stamped commands had moved the clock)")
        if auditFD >= 0 { close(auditFD) }
        return 0
    }

    func spawn(_ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.stackSize = 1 << 20
        thread.start()
    }

    // MARK: Lease

    func bindLease() throws -> Lease? {
        let ttl = config.leaseTTL
        let replicas = config.replicas
        guard let kv = try call("binding lease bucket \(Names.leaseBucket)", { () throws -> KeyValue in
            do {
                return try KeyValue.open(Names.leaseBucket, in: js)
            } catch let error as NatsError where error.isNotFound {
                return try KeyValue.create(KeyValue.Config(bucket: Names.leaseBucket, ttl: Int64(ttl * 1000),
                                                           replicas: replicas), in: js)
            }
        }) else { return nil }
        let partition = p
        return Lease(kv: kv, partition: p, ttl: ttl, log: { Shard.log(partition: partition, $0) })
    }

    /// Waits (a standby) until the lease is ours.
    func acquire(_ lease: Lease) throws {
        var holder: String? = nil
        var waitingSince = monotonicNanos()
        while true {
            if isStopping { throw Stopped() }
            do {
                if try lease.tryCreate() { return }
                if let now = lease.holder(), now != holder {
                    holder = now
                    log("standby: lease \(lease.key) held by \(now); waiting for it to lapse")
                }
            } catch {
                counts.withLock { $0.retries += 1 }
                if monotonicNanos() - waitingSince > 5_000_000_000 {
                    waitingSince = monotonicNanos()
                    log("standby: cannot reach lease bucket (\(error)); retrying")
                }
            }
            sleep(seconds: min(0.5, lease.ttl / 6))
        }
    }
}
