import Foundation
import NatsClient
import TypingCore
import TypingProtocol

/// The owner of one partition: holds its lease, consumes its commands, applies
/// them with typingd's engine in-process (``Session`` on the manual clock, no
/// drain, late `at` clamped), publishes the events, acknowledges. What it
/// guarantees is in cluster/README.md ("Shard": clock, lease, takeover, gaps and stalls;
/// "Guarantees"), with the figures in cluster/PERFORMANCE.md.
///
/// A `Shard` belongs to the thread that calls ``run()`` (it is no `Sendable`):
/// its engine, output, admission and consuming rules (``ConsumeState``) are
/// touched by that thread only. What other threads see is ``shared``.
public final class Shard {
    let config: Configuration
    /// What the shard's other threads see (``ShardShared``).
    package let shared: ShardShared
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
    /// The consuming rules' state (set by ``rebuild()``).
    var rules = ConsumeState(written: 0, published: 0, catchUpTarget: 0, snapshotEvery: 0, now: .now)
    var puller: Puller?

    // What the takeover found, for its log line.
    var streamCreated: Int64 = 0
    var maxPayload = 1 << 20
    var catchUpStarted: Int64 = 0
    var snapshotEvents = 0
    var snapshotBase: UInt64 = 0

    public init(config: Configuration) throws {
        self.config = config
        p = config.partition
        output = ShardOutput(partition: config.partition, buckets: config.buckets, audit: config.auditPath != nil)
        output.audienceOpen = config.audienceOpen
        var session = config.session
        session.clock = .manual
        session.drain = false
        session.engine.lateAt = .clamp
        pipeline = try InputPipeline.make(
            session: Session(
                configuration: session, format: ShardFormat(output: output), sink: NoSink(),
                observer: ShardLines(output: output)),
            threads: config.threads)
        shared = try ShardShared(config: config)
        subject = shared.subject
        durable = shared.durable
        connection = shared.connection
        js = shared.js
        if let path = config.auditPath {
            auditFD = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            if auditFD < 0 {
                throw StreamReadError(description: "--audit \(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Asks the shard to stop (from any thread: see ``ShardShared/stop()``).
    public func stop() { shared.stop() }

    var written: UInt64 { rules.written }
    var isStopping: Bool { shared.isStopping }
    func log(_ text: String) { shared.log(text) }
    func fence(_ why: String) -> Never { shared.fence(why) }
    func count(_ counter: ShardCounter, _ by: Int = 1) { shared.count(counter, by) }
    func call<T>(_ what: String, missing: Bool = false, _ body: () throws -> T) throws -> T? {
        try shared.call(what, missing: missing, body)
    }

    // MARK: Run

    /// Runs until stopped (0), or the lease is lost (the process ends with 75).
    public func run() -> Int32 {
        let shared = shared
        do {
            guard
                try ClusterCheck.verify(
                    js, partitions: config.partitions, stopping: { shared.isStopping },
                    log: { shared.log($0) }) != nil
            else { return 0 }
        } catch {
            log("\(error)")
            connection.close()
            return ClusterCheck.exitStatus
        }
        let statsSubscriptions: [Subscription]
        do {
            statsSubscriptions = try [
                connection.subscribe(Names.statsSubject), connection.subscribe(Names.statsSubject(p))
            ]
        } catch {
            log("cannot subscribe to the stats subjects: \(error)")
            return 1
        }
        for subscription in statsSubscriptions {
            shared.spawn { shared.serveStats(subscription) }
        }
        let lease: Lease
        do {
            guard let bound = try bindLease() else { return 0 }
            lease = bound
            self.lease = lease
            shared.state.withLock { $0.lease = lease }
            try acquire(lease)
        } catch {
            log("standby stopped")
            connection.close()
            return 0
        }
        shared.state.withLock { $0.isOwner = true }
        shared.spawn { lease.keep(fence: { shared.fence($0) }) }
        shared.spawn { lease.watchdog(fence: { shared.fence($0) }) }
        log("engine in-process (manual clock, no drain, late at clamped), starting")
        do {
            try rebuild()
            if config.tick > .zero { shared.spawn { shared.ticker() } }
            try consume()
        } catch is Stopped {
        } catch {
            log("stopping: \(error)")
        }
        // Finish: a snapshot being stored gets its time.
        let deadline = ContinuousClock.now + config.snapshotTimeout
        while shared.snapshotBusy.load(ordering: .acquiring) && ContinuousClock.now < deadline {
            pause(.milliseconds(20))
        }
        try? connection.flush(timeout: 2000)
        lease.release()
        connection.close()
        let c = shared.state.withLock { $0.counts }
        log(
            "stopped at seq \(written), \(c[.eventsPublished]) events in \(c[.messagesPublished]) messages published, \(c[.droppedLines]) lines deduplicated, \(c[.snapshotsStored]) snapshots stored (\(c[.snapshotsFailed]) failed, \(c[.snapshotsSkipped]) skipped), \(c[.gapsFilled]) messages taken from the stream (a lost delivery, a stall), \(c[.ticks]) ticks (\(c[.ticksSkipped]) not needed: stamped commands had moved the clock)"
        )
        if auditFD >= 0 { close(auditFD) }
        return 0
    }

    // MARK: Lease

    func bindLease() throws -> Lease? {
        let ttl = config.leaseTTL
        let replicas = config.replicas
        guard
            let kv = try call(
                "binding lease bucket \(Names.leaseBucket)",
                { () throws -> KeyValue in
                    do {
                        return try KeyValue.open(Names.leaseBucket, in: js)
                    } catch let error as NatsError where error.isNotFound {
                        return try KeyValue.create(
                            KeyValue.Config(
                                bucket: Names.leaseBucket, ttl: ttl.milliseconds,
                                replicas: replicas), in: js)
                    }
                })
        else { return nil }
        let shared = shared
        return Lease(kv: kv, partition: p, ttl: ttl.seconds, log: { shared.log($0) })
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
                count(.retries)
                if monotonicNanos() - waitingSince > 5_000_000_000 {
                    waitingSince = monotonicNanos()
                    log("standby: cannot reach lease bucket (\(error)); retrying")
                }
            }
            shared.sleep(.seconds(min(0.5, lease.ttl / 6)))
        }
    }
}
