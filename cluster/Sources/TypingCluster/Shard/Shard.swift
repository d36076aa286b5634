import Foundation
import NatsClient
import Synchronization
import TypingCore
@_spi(Daemon) import TypingProtocol

/// A shard's settings.
public struct ShardConfig: Sendable {
    public var servers: [String]
    public var partition: Int
    /// The cluster's partition count (checked against the one `ctl setup` kept).
    public var partitions = ClusterSettings().partitions
    public var buckets: Int
    public var session: SessionConfiguration
    /// typingd's `--audience open` (a closed view receives nothing).
    public var audienceOpen = false
    public var auditPath: String?
    public var snapshotEvery = 1000
    public var replicas = 3
    public var leaseTTL = 10.0
    public var tickMs = 100
    public var callTimeoutMs: Int64 = 2000
    public var snapshotTimeoutMs: Int64 = 10000
    public var ackWaitMs: Int64 = 5000
    public var maxAckPending: Int64 = 4096
    public var consumerReplicas = 1
    public var fetch = 256
    /// Threads that parse a message's lines, the applying one included (typingd's
    /// --threads: the cores by default).
    public var threads = max(1, min(64, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    public var pingMs: Int64 = 1000
    /// On losing its lease, exit 75 (for a service manager that restarts it)
    /// instead of starting over, in the same process, as a standby.
    public var exitOnLeaseLoss = false
    /// Whether the servers are tried in the order given (`--servers-in-order`).
    public var serversInOrder = false

    public init(servers: [String], partition: Int, buckets: Int, session: SessionConfiguration) {
        self.servers = servers
        self.partition = partition
        self.buckets = buckets
        self.session = session
    }
}

/// What a shard counts (its stats).
struct ShardCounts {
    var eventsPublished = 0
    var messagesPublished = 0
    var droppedLines = 0
    var droppedEvents = 0
    var undecodable = 0
    var snapshotsStored = 0
    var snapshotsFailed = 0
    var snapshotsSkipped = 0
    var purgesFailed = 0
    var ticks = 0
    var ticksSkipped = 0
    var ticksFailed = 0
    var consumersRemade = 0
    var retries = 0
    var gapsFilled = 0
    var consumerStalls = 0
    /// Lines a router numbered that never reached the stream (gaps in its numbers).
    var linesMissing = 0
    var applied: UInt64 = 0
    var routers: [String: Int] = [:]
}

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
        do {
            guard try ClusterCheck.verify(js, partitions: config.partitions, stopping: { [self] in isStopping },
                                          log: { [self] in log($0) }) != nil else { return 0 }
        } catch {
            log("\(error)")
            connection.close()
            return ClusterCheck.exitStatus
        }
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

    // MARK: Applying

    /// Feeds complete lines (each ending in LF) to the engine: every line is
    /// applied when it returns (the output's mode may change then). Many lines go
    /// through the parsing threads, as a flood of input does in typingd.
    @inline(__always)
    func feed(_ lines: [UInt8]) {
        lines.withUnsafeBytes { bytes in
            _ = pipeline.feed(bytes, stamp: nil, flooded: bytes.count >= Self.floodBytes)
            _ = pipeline.settle()
        }
    }

    /// A message at least this long is parsed on the parsing threads.
    static let floodBytes = 1 << 15

    /// The lines of a stored message to apply, or nil when it does not decode.
    func admit(_ headers: [String: String], _ body: [UInt8], seq: UInt64) -> [UInt8]? {
        do {
            let (lines, dropped) = try admission.admit(headers: headers, body: body, limit: max(maxPayload, 1 << 20))
            if dropped > 0 { counts.withLock { $0.droppedLines += dropped } }
            for gap in admission.takeGaps() {
                counts.withLock { $0.linesMissing += gap.count }
                log("a gap in a router's line numbers at seq \(seq): \(gap)")
            }
            return lines
        } catch {
            counts.withLock { $0.undecodable += 1 }
            log("a message not applied (seq \(seq)): \(error)")
            return nil
        }
    }

    /// Applies one message in the mode its sequence calls for (catching up, or a
    /// gap filled from the stream), and publishes its events.
    func applyOne(seq: UInt64, headers: [String: String], body: [UInt8]) throws {
        let lines = admit(headers, body, seq: seq) ?? []
        if seq <= published {
            output.mode = .suppress
            feed(lines)
            output.mode = .publish
            output.clearTouched()
            quiet += 1
        } else if seq <= catchUpTarget && !caughtUp.load(ordering: .relaxed) {
            output.mode = .backlog
            setAuditPrefix(seq, backlog: true)
            // Each line's screen changes are applied around its own indicators
            // by the format, from the command the engine applied (ShardFormat.lineBegins and lineEnded).
            feed(lines)
            output.mode = .publish
            try publishTouched(seq: seq, first: seq)
        } else {
            setAuditPrefix(seq, backlog: false)
            feed(lines)
            try publishTouched(seq: seq, first: seq)
        }
        if !caughtUp.load(ordering: .relaxed) { replayed += 1 }
        written = seq
        clock.store(pipeline.session.engine.now, ordering: .relaxed)
        sinceSnapshot += 1
    }

    func setAuditPrefix(_ seq: UInt64, backlog: Bool) {
        if output.audit != nil { output.auditPrefix = Array("\(seq)\t\(backlog ? "B" : "P")\t".utf8) }
    }

    /// Publishes what the last entry wrote: one message per subject (split only
    /// past the max payload), headers epoch, partition and the last sequence
    /// applied; writes the audit; folds the resync table.
    func publishTouched(seq: UInt64, first: UInt64, audit: Bool = true) throws {
        guard let lease else { return }
        if !lease.held { fence("its time ran out before seq \(seq) was published") }
        let epoch = lease.epoch
        if audit, auditFD >= 0, output.audit != nil {
            output.audit!.append(contentsOf: "\(seq)\tE\t\(first):\(p):\(epoch)\n")
            output.audit!.withBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let count = Glibc.write(auditFD, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                    if count <= 0 { if errno == EINTR { continue }; break }
                    offset += count
                }
            }
            output.audit!.removeAll()
        }
        let headers = [Names.Header.epoch: String(epoch), Names.Header.partition: String(p), Names.Header.sequence: String(seq)]
        let limit = max(1024, maxPayload - 4096)
        var messages = 0
        var events = 0
        var droppedEvents = 0
        for outgoing in output.touched {
            events += outgoing.lines
            outgoing.buffer.withBytes { bytes in
                var start = 0
                // The lines joined with "\n": the last LF is left out.
                let end = bytes.count - 1
                while start < end {
                    var stop = end
                    if stop - start > limit {
                        // The last line end within the limit (one line longer than it goes alone).
                        var cut = start + limit
                        while cut > start && bytes[cut] != 0x0A { cut -= 1 }
                        if cut == start { cut = bytes[(start + limit)...].firstIndex(of: 0x0A) ?? end }
                        stop = cut
                    }
                    let message = NatsMessage(subject: outgoing.subject, headers: headers,
                                              data: Array(UnsafeRawBufferPointer(rebasing: bytes[start..<stop])))
                    do {
                        try connection.publish(message)
                        messages += 1
                    } catch {
                        var lines = 1
                        for byte in bytes[start..<stop] where byte == 0x0A { lines += 1 }
                        droppedEvents += lines
                        log("\(lines) events for \(outgoing.subject) not published (\(error))")
                    }
                    start = stop + 1
                }
            }
        }
        output.clearTouched()
        let changes = output.pendingShown
        output.pendingShown.removeAll(keepingCapacity: true)
        let routers = admission.routers
        counts.withLock {
            $0.eventsPublished += events
            $0.messagesPublished += messages
            $0.droppedEvents += droppedEvents
            $0.applied = seq
            $0.routers = routers
        }
        if !changes.isEmpty { shown.withLock { $0.apply(changes) } }
    }

    // MARK: Rebuild and catch-up

    func rebuild() throws {
        catchUpStarted = monotonicNanos()
        maxPayload = connection.maxPayload > 0 ? connection.maxPayload : 1 << 20
        let info = try call("reading stream \(Names.stream)") { try js.streamInfo(Names.stream) }
        streamCreated = info?.created ?? 0
        let replicas = max(1, min(config.replicas, info?.replicas.count ?? config.replicas))
        try call("making stream \(Names.snapshotStream)") { () throws in
            do {
                _ = try js.streamInfo(Names.snapshotStream)
            } catch let error as NatsError where error.isNotFound {
                var snapshots = JetStream.StreamConfig(name: Names.snapshotStream, subjects: [Names.snapshotSubjects])
                snapshots.storage = .file
                snapshots.replicas = replicas
                try js.addStream(snapshots)
            }
        }
        let snapshot = try loadSnapshot()
        if let (head, body) = snapshot {
            // The body: a line of JSON (seq, at, epoch, routers), then the rebuild's commands.
            let newline = body.firstIndex(of: 0x0A) ?? body.count
            if let meta = try? JSONSerialization.jsonObject(with: Data(body[..<newline])) as? [String: Any],
               let routers = meta["routers"] as? [String: NSNumber] {
                admission.routers = routers.mapValues(\.intValue)
                snapshotEvents = (meta["events"] as? NSNumber)?.intValue ?? 0
            }
            output.mode = .suppress
            if newline < body.count { feed(Array(body[(newline + 1)...])) }
            output.mode = .publish
            output.clearTouched()
            written = head.seq
            snapshotBase = head.seq
        }
        // A snapshot proves what was published: its owner stored it only after
        // publishing its message's events. Without one nothing was purged, and the
        // old consumer's acknowledgement floor is the proof.
        if snapshot != nil {
            published = written
        } else {
            published = (try call("reading the consumer", missing: true) { try js.consumerInfo(Names.stream, durable).ackFloor }) ?? 0
        }
        let last = (try call("reading the partition's last message", missing: true) {
            try js.lastMessage(Names.stream, subject: subject)?.streamSequence
        }) ?? nil
        catchUpTarget = last ?? 0
        counts.withLock { $0.applied = written }
        clock.store(pipeline.session.engine.now, ordering: .relaxed)
        try startConsumer()
    }

    /// The last snapshot, believed missing at once only by a shard the cluster has
    /// answered every time; else only after 3 such answers in a row, a second apart.
    func loadSnapshot() throws -> (head: SnapshotStore.Head, body: [UInt8])? {
        let store = SnapshotStore(backend: NatsSnapshotBackend(js: js, connection: connection, timeout: config.snapshotTimeoutMs), partition: p)
        var confirmations = 0
        var brokenTries = 0
        while true {
            let before = counts.withLock { $0.retries }
            let found = try call("fetching the snapshot") { () throws -> (head: SnapshotStore.Head, body: [UInt8])?? in
                do {
                    return .some(try store.load(streamCreated: streamCreated))
                } catch let broken as SnapshotStore.Broken {
                    // A snapshot being replaced may lose its chunks under the reader:
                    // asked again, the newer head is read. One that stays broken is
                    // given up after 3 tries (loudly: the stream behind it is purged).
                    brokenTries += 1
                    if brokenTries < 3 {
                        log("the snapshot does not restore (\(broken)); asking again")
                        throw broken
                    }
                    log("the snapshot does not restore (\(broken)) 3 times: rebuilding from the stream alone")
                    return .some(nil)
                }
            }
            guard let result = found else { throw Stopped() }
            if let result { return result }
            let retries = counts.withLock { $0.retries }
            if retries == 0 { return nil }
            confirmations = retries != before ? 1 : confirmations + 1
            if confirmations >= 3 { return nil }
            log("no snapshot, after the cluster failed to answer; asking again")
            sleep(seconds: 1)
        }
    }

    /// Ends the catch-up: each screen's last backlog indicator is published once,
    /// then each announcement the backlog made to a screen that still shows it.
    func finishCatchUp() throws {
        let (kept, announced) = output.publishBacklog()
        try publishTouched(seq: written, first: written, audit: false)
        caughtUp.store(true, ordering: .releasing)
        let ms = (monotonicNanos() - catchUpStarted) / 1_000_000
        log("connected to \(connection.connectedURL ?? "no server")")
        log("caught up in \(ms) ms: snapshot after seq \(snapshotBase) (\(snapshotEvents) events), \(replayed) messages replayed (\(quiet) published before: no output), \(kept) backlog indicators and \(announced) announcements published; now at seq \(written), epoch \(lease?.epoch ?? 0)")
        try? connection.publish(NatsMessage(subject: "typingd.owner.\(p)", data: Array(
            "{\"partition\":\(p),\"epoch\":\(lease?.epoch ?? 0),\"viewer_buckets\":\(config.buckets)}".utf8)))
        do {
            let resync = try connection.subscribe(Names.resyncSubject)
            spawn { [self] in serveResync(resync) }
        } catch {
            log("cannot subscribe to \(Names.resyncSubject): \(error)")
        }
    }

    // MARK: Consuming

    var puller: Puller?

    /// Makes the durable consumer anew right after the last message applied:
    /// nothing of an earlier owner's remains in it.
    func startConsumer() throws {
        puller = nil
        try call("deleting the old consumer") { try js.deleteConsumer(Names.stream, durable) }
        var consumer = JetStream.ConsumerConfig(durable: durable, filterSubject: subject)
        consumer.startSequence = written + 1
        consumer.ackAll = true
        consumer.ackWait = config.ackWaitMs
        consumer.maxAckPending = config.maxAckPending
        consumer.replicas = config.consumerReplicas
        consumer.memory = true
        try call("making the consumer") { try js.addConsumer(Names.stream, consumer) }
        // A new inbox: what the old consumer still sends is neither applied nor acknowledged.
        puller = try call("subscribing to the consumer's deliveries") { Puller(try PullInbox(connection, stream: Names.stream, durable: durable)) }
    }

    func remakeConsumer(_ why: String) throws {
        log("\(why): making it anew after seq \(written)")
        try startConsumer()
        counts.withLock { $0.consumersRemade += 1 }
    }

    func consume() throws {
        var delivered: UInt64? = nil
        var failingSince: Int64? = nil
        var delay = 0.05
        var progressAt = monotonicNanos()
        var progressSeq = written
        var ahead = false
        var stalls = 0
        while !isStopping {
            if !caughtUp.load(ordering: .relaxed) && written >= catchUpTarget { try finishCatchUp() }
            if sinceSnapshot >= config.snapshotEvery && config.snapshotEvery > 0 && caughtUp.load(ordering: .relaxed) {
                sinceSnapshot = 0
                takeSnapshot()
            }
            let now = monotonicNanos()
            if written != progressSeq {
                progressAt = now
                progressSeq = written
                ahead = false
                stalls = 0
            } else if now - progressAt >= 2_000_000_000 && failingSince == nil {
                progressAt = now
                let (isAhead, filled) = try stalled(ahead)
                ahead = isAhead
                if filled {
                    progressSeq = written
                    stalls += 1
                    if stalls >= 3 {
                        try remakeConsumer("the consumer stalled \(stalls) times in a row")
                        delivered = nil
                        stalls = 0
                        progressAt = monotonicNanos()
                    }
                    continue
                }
            }
            guard let puller else { try startConsumer(); continue }
            let messages: [NatsMessage]
            do {
                messages = try puller.next(batch: config.fetch, wait: 1000)
            } catch {
                let now = monotonicNanos()
                if failingSince == nil {
                    failingSince = now
                    log("pull failed (\(error)); retrying")
                }
                if let since = failingSince, now - since >= 4_000_000_000,
                   (try? js.consumerInfo(Names.stream, durable)) == nil {
                    try remakeConsumer("the consumer does not answer")
                    delivered = nil
                    failingSince = nil
                    delay = 0.05
                    progressAt = monotonicNanos()
                    ahead = false
                    continue
                }
                sleep(seconds: delay)
                delay = min(delay * 2, 2)
                continue
            }
            if let since = failingSince {
                // An empty pull after a failure proves nothing (the consumer's node may
                // be gone, its requests answered by nobody): the consumer must answer.
                if messages.isEmpty {
                    if monotonicNanos() - since < 4_000_000_000 { continue }
                    if (try? js.consumerInfo(Names.stream, durable)) == nil {
                        try remakeConsumer("the consumer does not answer")
                        delivered = nil
                        failingSince = nil
                        delay = 0.05
                        progressAt = monotonicNanos()
                        ahead = false
                        continue
                    }
                }
                log("pulling again after \(String(format: "%.2f", Double(monotonicNanos() - since) / 1e9)) s")
                failingSince = nil
                delay = 0.05
                progressAt = monotonicNanos()
                ahead = false
            }
            if messages.isEmpty { continue }
            try applyFetch(messages, delivered: &delivered)
        }
    }

    /// A fetch: messages to publish are applied together and published as one
    /// entry; a jump in the consumer's sequence is filled from the stream first.
    func applyFetch(_ messages: [NatsMessage], delivered: inout UInt64?) throws {
        var runFirst: UInt64 = 0
        var runLast: UInt64 = 0
        var lastMessage: NatsMessage? = nil
        func endRun() throws {
            if runFirst > 0 {
                // The audit names each event by the run's last sequence, known only
                // now: a run ends early too (a jump filled from the stream), and its
                // lines must not keep the placeholder past their record's E line.
                if output.audit != nil { fixAuditPrefix(runLast) }
                try publishTouched(seq: runLast, first: runFirst)
                written = runLast
                clock.store(pipeline.session.engine.now, ordering: .relaxed)
                runFirst = 0
            }
        }
        for message in messages {
            let seq = message.streamSequence
            let jumped = delivered == nil || message.consumerSequence != (delivered ?? 0) &+ 1
            delivered = message.consumerSequence
            lastMessage = message
            if seq > written && jumped && seq > written + 1 {
                try endRun()
                try fillGap(before: seq, why: nil)
            }
            if seq <= written { continue }   // delivered again, or taken from the stream: acknowledged below
            let publishing = seq > published && (caughtUp.load(ordering: .relaxed) || seq > catchUpTarget)
            if !publishing {
                try endRun()
                try applyOne(seq: seq, headers: message.headers, body: message.data)
                continue
            }
            if runFirst == 0 {
                runFirst = seq
                setAuditPrefix(0, backlog: false)
            }
            runLast = seq
            written = seq
            sinceSnapshot += 1
            if let lines = admit(message.headers, message.data, seq: seq) { feed(lines) }
        }
        try endRun()
        if let lastMessage, let puller {
            do { try puller.inbox.ack(lastMessage) } catch { log("ack of seq \(lastMessage.streamSequence) failed (\(error))") }
        }
    }

    /// The audit lines of a run were written with a placeholder sequence: the
    /// run's last is only known at its end.
    func fixAuditPrefix(_ seq: UInt64) {
        guard var audit = output.audit.take() else { return }
        let placeholder = Array("0\tP\t".utf8)
        let real = Array("\(seq)\tP\t".utf8)
        var fixed = OutputBuffer(capacity: audit.count + audit.count / 8)
        audit.withBytes { bytes in
            var start = 0
            while start < bytes.count {
                let end = bytes[start...].firstIndex(of: 0x0A) ?? (bytes.count - 1)
                if end - start >= placeholder.count && bytes[start..<(start + placeholder.count)].elementsEqual(placeholder) {
                    real.withUnsafeBytes { fixed.append($0) }
                    fixed.append(UnsafeRawBufferPointer(rebasing: bytes[(start + placeholder.count)...end]))
                } else {
                    fixed.append(UnsafeRawBufferPointer(rebasing: bytes[start...end]))
                }
                start = end + 1
            }
        }
        audit.removeAll()
        output.audit = consume fixed
        _ = consume audit
    }

    /// Applies the partition's messages stored after the last one applied and
    /// before `seq`, read from the stream's leader.
    func fillGap(before seq: UInt64, why: String?) throws {
        var taken: [UInt64] = []
        defer {
            if let first = taken.first, let last = taken.last {
                log("\(why ?? "a delivery was lost before seq \(seq)"): \(taken.count == 1 ? "message \(first)" : "messages \(first)..\(last) (\(taken.count))") applied from the stream")
            }
        }
        while true {
            let from = written + 1
            guard let found = try call("reading a message", { () throws -> StoredMessage? in
                try StreamReads.next(connection, stream: Names.stream, subject: subject, from: from, timeout: config.callTimeoutMs)
            }), let stored = found, stored.sequence < seq else { return }
            taken.append(stored.sequence)
            counts.withLock { $0.gapsFilled += 1 }
            try applyOne(seq: stored.sequence, headers: stored.headers, body: stored.data)
        }
    }

    /// A look at the stream after 2 s without a new delivery: (ahead now, applied).
    func stalled(_ ahead: Bool) throws -> (Bool, Bool) {
        guard let last = (try? js.lastMessage(Names.stream, subject: subject))??.streamSequence, last > written else {
            return (false, false)
        }
        if !ahead { return (true, false) }
        counts.withLock { $0.consumerStalls += 1 }
        try fillGap(before: last + 1, why: "the consumer delivered nothing new for 4 s while the stream held up to seq \(last)")
        return (false, true)
    }

    // MARK: Snapshots

    /// Takes a snapshot of the engine now (after seq `written`, whose events are
    /// published) and stores it in the background; one at a time.
    func takeSnapshot() {
        if snapshotBusy.load(ordering: .acquiring) {
            counts.withLock { $0.snapshotsSkipped += 1 }
            return
        }
        let seq = written
        output.mode = .capture
        output.capturedMembers.removeAll()
        output.capturedStreaks.removeAll()
        feed(Array("{\"cmd\":\"snapshot\",\"id\":\"typingd:snap:\(seq)\"}\n".utf8))
        output.mode = .publish
        let members = output.capturedMembers
        let streaks = output.capturedStreaks
        output.capturedMembers = []
        output.capturedStreaks = []
        let routers = admission.routers
        let at = output.capturedAt
        let epoch = lease?.epoch ?? 0
        snapshotBusy.store(true, ordering: .releasing)
        let created = streamCreated
        spawn { [self] in
            defer { snapshotBusy.store(false, ordering: .releasing) }
            let started = monotonicNanos()
            var body = Array("{\"seq\":\(seq),\"at\":\(at),\"epoch\":\(epoch),\"events\":\(members.count + streaks.count),\"routers\":".utf8)
            body += Self.jsonObject(routers)
            body += Array("}\n".utf8)
            body += SnapshotRebuild.commands(members: members, streaks: streaks)
            guard let js = try? JetStream(connection, wait: config.snapshotTimeoutMs) else { return }
            let store = SnapshotStore(backend: NatsSnapshotBackend(js: js, connection: connection, timeout: config.snapshotTimeoutMs), partition: p)
            let head: SnapshotStore.Head
            do {
                guard lease?.held == true else { return }
                head = try store.save(body, seq: seq, streamCreated: created, epoch: epoch, stillOwner: { self.lease?.held == true })
            } catch {
                counts.withLock { $0.snapshotsFailed += 1 }
                log("snapshot after seq \(seq) not stored (\(error)): skipped")
                return
            }
            counts.withLock { $0.snapshotsStored += 1 }
            var purged = "older messages purged"
            do {
                guard lease?.held == true else { throw Stopped() }
                try js.purge(Names.stream, subject: subject, before: seq + 1)
            } catch {
                counts.withLock { $0.purgesFailed += 1 }
                purged = "older messages not purged (\(error))"
            }
            log("snapshot after seq \(seq) (\(members.count + streaks.count) events, \(head.raw / 1024) KiB, \(head.size / 1024) KiB compressed, \(head.chunks.count) chunks) stored, \(purged), in \((monotonicNanos() - started) / 1_000_000) ms")
        }
    }

    static func jsonObject(_ routers: [String: Int]) -> [UInt8] {
        var out = "{"
        for (index, (name, last)) in routers.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { out += "," }
            out += StreamReads.jsonString(name) + ":" + String(last)
        }
        return Array((out + "}").utf8)
    }

    // MARK: Ticks

    /// A tick into the partition every --tick-ms while the lease is held and the
    /// partition's clock is that far behind the wall clock.
    func ticker() {
        guard let tickJS = try? JetStream(connection, wait: max(Int64(config.tickMs) * 5, 1000)) else { return }
        var last = 0
        while !isStopping {
            sleep(seconds: Double(config.tickMs) / 1000)
            guard !isStopping, let lease, lease.held else { continue }
            let wall = wallMilliseconds()
            if wall - clock.load(ordering: .relaxed) < config.tickMs {
                counts.withLock { $0.ticksSkipped += 1 }
                continue
            }
            last = max(wall, last)
            let epoch = String(lease.epoch)
            do {
                _ = try tickJS.publish(NatsMessage(subject: subject, headers: [Names.Header.tick: epoch],
                                                   data: Array("{\"cmd\":\"tick\",\"at\":\(last)}\n".utf8)),
                                       id: "tick:\(p):\(epoch):\(last)")
                counts.withLock { $0.ticks += 1 }
            } catch {
                counts.withLock { $0.ticksFailed += 1 }
            }
        }
    }

    // MARK: Requests

    static let counters: Set<String> = ["events_published", "messages_published", "dropped", "dropped_lines", "dropped_events",
                                        "snapshots_stored", "snapshots_failed", "snapshots_skipped", "ticks", "retries",
                                        "lease_renewals", "gaps_filled", "consumer_stalls", "ticks_skipped", "consumers_remade",
                                        "undecodable", "lines_missing"]

    func serveStats(_ subscription: Subscription) {
        guard let statsJS = try? JetStream(connection, wait: 1000) else { return }
        while !isStopping {
            guard let request = try? subscription.next(timeout: 500), let reply = request.reply else { continue }
            let owner = isOwner.load(ordering: .acquiring)
            let last: UInt64? = (try? statsJS.lastMessage(Names.stream, subject: subject)).map { $0?.streamSequence ?? 0 }
            var lag: UInt64? = nil
            if owner, let info = try? statsJS.consumerInfo(Names.stream, durable) {
                lag = info.pending + UInt64(max(0, info.ackPending))
            }
            let c = counts.withLock { $0 }
            let role = owner ? "owner" : "standby"
            let fields: [(String, String)] = [
                ("partition", "\(p)"), ("role", "\"\(role)\""), ("epoch", "\(lease?.epoch ?? 0)"),
                ("applied_seq", "\(c.applied)"), ("stream_last_seq", last.map(String.init) ?? "null"),
                ("lag", lag.map(String.init) ?? "null"), ("events_published", "\(c.eventsPublished)"),
                ("messages_published", "\(c.messagesPublished)"),
                ("dropped", "\(c.droppedLines + c.droppedEvents + c.snapshotsSkipped + c.undecodable)"),
                ("dropped_lines", "\(c.droppedLines)"), ("dropped_events", "\(c.droppedEvents)"),
                ("undecodable", "\(c.undecodable)"), ("snapshots_stored", "\(c.snapshotsStored)"),
                ("snapshots_failed", "\(c.snapshotsFailed)"), ("snapshots_skipped", "\(c.snapshotsSkipped)"),
                ("ticks", "\(c.ticks)"), ("ticks_skipped", "\(c.ticksSkipped)"),
                ("consumers_remade", "\(c.consumersRemade)"), ("retries", "\(c.retries)"),
                ("lease_renewals", "\(lease?.renewals.load(ordering: .relaxed) ?? 0)"),
                ("gaps_filled", "\(c.gapsFilled)"), ("consumer_stalls", "\(c.consumerStalls)"),
                ("lines_missing", "\(c.linesMissing)"),
                ("routers", String(decoding: Self.jsonObject(c.routers), as: UTF8.self)), ("pid", "\(getpid())"),
                ("viewer_buckets", "\(config.buckets)"),
                ("lease_owner", StreamReads.jsonString(lease?.owner ?? "")),
                ("uptime_s", String(format: "%.3f", Double(monotonicNanos() - started) / 1e9)),
            ]
            let body: String
            if String(decoding: request.data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "prometheus" {
                let labels = "{partition=\"\(p)\",role=\"\(role)\",pid=\"\(getpid())\"}"
                var lines: [String] = []
                for (name, value) in fields where name != "partition" && name != "pid" {
                    guard value.first.map({ $0.isNumber || $0 == "-" }) == true else { continue }
                    let counter = Self.counters.contains(name)
                    let metric = "typingd_shard_" + name + (counter ? "_total" : "")
                    lines.append("# TYPE \(metric) \(counter ? "counter" : "gauge")")
                    lines.append("\(metric)\(labels) \(value)")
                }
                body = lines.joined(separator: "\n") + "\n"
            } else {
                body = "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
            }
            try? connection.publish(NatsMessage(subject: reply, data: Array(body.utf8)))
        }
    }

    func serveResync(_ subscription: Subscription) {
        while !isStopping {
            guard let request = try? subscription.next(timeout: 500), let reply = request.reply else { continue }
            var lines: [[UInt8]] = []
            if let object = try? JSONSerialization.jsonObject(with: Data(request.data)) as? [String: Any],
               let viewer = object["viewer"] as? String {
                lines = shown.withLock { $0.of(viewer) }
            }
            let applied = counts.withLock { $0.applied }
            let epoch = lease?.epoch ?? 0
            var body = Array("{\"partition\":\(p),\"epoch\":\(epoch),\"seq\":\(applied),\"viewer_buckets\":\(config.buckets),\"indicators\":[".utf8)
            for (index, line) in lines.enumerated() {
                if index > 0 { body.append(0x2C) }
                body += line
            }
            body += Array("]}".utf8)
            try? connection.publish(NatsMessage(subject: reply, headers: [
                Names.Header.epoch: String(epoch), Names.Header.partition: String(p), Names.Header.sequence: String(applied),
            ], data: body))
        }
    }
}

/// Snapshots in the stream ``Names/snapshotStream``.
struct NatsSnapshotBackend: SnapshotBackend {
    let js: JetStream
    let connection: NatsConnection
    let timeout: Int64

    func append(subject: String, headers: [String: String], data: [UInt8]) throws -> UInt64 {
        try js.publish(NatsMessage(subject: subject, headers: headers, data: data), timeout: timeout).sequence
    }

    func last(subject: String) throws -> StoredMessage? {
        guard let message = try js.lastMessage(Names.snapshotStream, subject: subject) else { return nil }
        return StoredMessage(sequence: message.streamSequence, subject: message.subject, headers: message.headers, data: message.data)
    }

    func message(_ sequence: UInt64) throws -> StoredMessage? {
        guard let message = try js.message(Names.snapshotStream, sequence: sequence) else { return nil }
        return StoredMessage(sequence: message.streamSequence, subject: message.subject, headers: message.headers, data: message.data)
    }

    func purge(subject: String, before sequence: UInt64) throws {
        try js.purge(Names.snapshotStream, subject: subject, before: sequence)
    }

    var maxPayload: Int { max(4096 + 1024, connection.maxPayload) }
}
