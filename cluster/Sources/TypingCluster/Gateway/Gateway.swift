import Dispatch
import NatsClient
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A gateway: the indicators of a set of viewers, from every partition's owner,
/// kept right through lost messages, reconnects and takeovers, and their
/// announcements for screen readers.
///
/// A chat server embeds one and is told each change of a viewer's screen (each
/// screen is a conversation, a thread or a chat-list row, in the main screen or
/// the side pane: ``Screen``), and each announcement (``GatewayUpdate/kind``
/// ``GatewayUpdate/Kind/announce``: hand its text to that viewer's live region):
///
/// ```swift
/// let gateway = try Gateway(.init(servers: ["nats://127.0.0.1:14222"], viewers: ["u6"]),
///                           onUpdate: { update in show(update.viewer, update.screen, update.line) })
/// gateway.resync(patience: 0)          // what was shown before it started
/// ...
/// let finals = gateway.finish(drain: .seconds(60))
/// ```
///
/// It subscribes to its viewers' buckets (`typingd.viewers.B`, B = FNV-1a of the
/// id modulo ``Configuration/viewerBuckets``), or to every bucket with
/// ``Configuration/allViewers``, and applies the rules of ``GatewayState``. It
/// **resyncs** (asks every partition's owner for each viewer's screens on
/// `typingd.resync`) after the client dropped messages (a slow consumer), after a
/// reconnect, and after a new epoch for a partition; partitions that do not
/// answer are asked again with a back-off up to 2 s, and a trigger during a
/// resync starts one more after it.
///
/// `onUpdate` is called for every change and announcement, in order, with the
/// gateway's lock held (from nats.c's delivery threads and the resync thread):
/// it must not call back into the gateway.
public final class Gateway: Sendable {
    /// How to run.
    public struct Configuration: Sendable {
        /// The servers' URLs.
        public var servers: [String]
        /// The viewers served.
        public var viewers: [String]
        /// Subscribe to every bucket and serve every viewer heard of (besides ``viewers``).
        public var allViewers = false
        /// Partitions (PARTITIONS).
        public var partitions = ClusterSettings().partitions
        /// Viewer buckets (VIEWER_BUCKETS): the same number as every shard's.
        public var viewerBuckets = ClusterSettings().viewerBuckets
        /// Messages queued per subscription before the client drops them (a slow consumer).
        public var pendingLimit = 65536
        /// Keeps each message's handler busy this long (to reproduce a slow gateway).
        public var slow = Duration.zero
        /// Whether to resync at all (off: to see what it costs).
        public var resync = true
        /// The connection's ping interval (PING_MS).
        public var ping = Duration.milliseconds(ClusterSettings().pingMs)
        /// The connection's name, as the servers show it.
        public var name = "gateway"

        public init(servers: [String], viewers: [String]) {
            self.servers = servers
            self.viewers = viewers
        }
    }

    /// The connection.
    let connection: NatsConnection
    let core: Core
    let subscriptions: [Subscription]
    let ownerSubscription: Subscription

    /// Connects, subscribes, and starts the resync thread. `onUpdate` is told every
    /// change of a screen; `log` every notable event (one line each);
    /// `onMismatch` once, when a shard publishes by another number of viewer
    /// buckets than ``Configuration/viewerBuckets`` (the gateway cannot serve its
    /// viewers: stop it).
    public init(
        _ configuration: Configuration,
        onUpdate: @escaping @Sendable (GatewayUpdate) -> Void,
        log: @escaping @Sendable (String) -> Void = { _ in },
        onMismatch: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(NatsError) {
        let core = Core(configuration: configuration, onUpdate: onUpdate, log: log, onMismatch: onMismatch)
        self.core = core
        let events = NatsConnection.Events()
        events.disconnected = { [weak core] in
            if let core, !core.isClosed { core.log("disconnected") }
        }
        events.reconnected = { [weak core] in core?.reconnected() }
        events.slowConsumer = { [weak core] in core?.slowConsumer() }
        events.error = { [weak core] in core?.log("nats: \($0)") }
        let options = NatsConnection.Options(
            servers: configuration.servers, name: configuration.name,
            pingInterval: configuration.ping.milliseconds, connectTimeout: 2000,
            reconnectWait: 200)
        connection = try NatsConnection(options, events: events)
        core.reconnectedURL = { [weak connection] in connection?.connectedURL }
        var subscriptions: [Subscription] = []
        let subjects =
            configuration.allViewers
            ? [Names.viewerSubjects]
            : Set(
                configuration.viewers.map {
                    Names.viewerSubject(Names.viewerBucket($0, among: configuration.viewerBuckets))
                }
            ).sorted()
        for subject in subjects {
            let subscription = try connection.subscribe(subject) { [weak core] message in core?.take(message) }
            try subscription.setPendingLimits(
                messages: Int32(clamping: max(1, configuration.pendingLimit)), bytes: 64 << 20)
            subscriptions.append(subscription)
        }
        self.subscriptions = subscriptions
        ownerSubscription = try connection.subscribe(Names.ownerSubjects) { [weak core] message in core?.owner(message)
        }
        try connection.flush(timeout: 5000)
        let connection = self.connection
        DispatchQueue(label: "typingd.gateway.resync").async { [core] in
            core.resyncLoop(connection)
        }
    }

    deinit {
        core.close()
    }

    /// Waits until the cluster answers and checks it is one this gateway can serve
    /// (``ClusterCheck``): JetStream there, set up, with
    /// ``Configuration/partitions``. Throws the problem (no JetStream, not set up,
    /// another partition count) once sure of it; an outage is waited through,
    /// with a line to `log` every 5 s.
    public func checkCluster(log: (String) -> Void) throws(ClusterCheck.Problem) {
        let js: JetStream
        do {
            js = try JetStream(connection, wait: 2000)
        } catch {
            log("no JetStream context (\(error)): the cluster is not checked")
            return
        }
        _ = try ClusterCheck.verify(js, partitions: core.configuration.partitions, log: log)
    }

    /// Every viewer's screens from one answer per partition, now, on the caller's
    /// thread. `patience`: give up on partitions that have not answered after this
    /// many seconds (0: one round, no retries); nil: ask until every one answered.
    public func resync(patience: Double?) {
        guard core.configuration.resync, !core.viewersNow.isEmpty else { return }
        do {
            try core.resync(connection, patience: patience)
        } catch {
            core.log("resync failed: \(error)")
        }
    }

    /// Asks for a resync (on the resync thread).
    public func wantResync() { core.wantResync() }

    /// The counters so far.
    public var counts: GatewayState.Counts { core.state.withLock { $0.state.counts } }

    /// The viewers served now (with ``Configuration/allViewers``: every one heard of).
    public var viewers: Set<String> { core.viewersNow }

    /// Messages dropped by the client so far (its queue was full).
    public var dropped: Int64 { subscriptions.reduce(0) { $0 + $1.dropped } }

    /// The mismatch that stopped it, if any.
    public var mismatch: String? { core.state.withLock { $0.mismatch } }

    /// Ends: reads what the server has sent (a flush: its answer comes after every
    /// message sent before it), what is queued and any resync due, for at most
    /// `drain`; then stops resyncing and gives each viewer's final
    /// indicator per screen. The connection stays open until ``close()``.
    public func finish(drain: Duration) -> [GatewayState.Final] {
        let deadline = ContinuousClock.now + max(.zero, drain)
        func left() -> Int64 {
            max(1000, ContinuousClock.now.duration(to: deadline).milliseconds)
        }
        func busy() -> Bool {
            subscriptions.contains { $0.pendingMessages > 0 }
                || core.state.withLock { $0.inFlight > 0 || $0.resyncing || $0.wanted }
        }
        while ContinuousClock.now < deadline {
            try? connection.flush(timeout: left())
            while ContinuousClock.now < deadline && busy() { pause(.milliseconds(50)) }
            let before = counts.messages
            try? connection.flush(timeout: left())
            pause(.milliseconds(50))
            if counts.messages == before && !busy() { break }
        }
        core.close()
        return core.state.withLock { $0.state.finals }
    }

    /// Closes the connection.
    public func close() {
        core.close()
        connection.close()
    }
}

/// The gateway's state and its handlers, apart from the connection (which holds
/// them through its callbacks).
final class Core: Sendable {
    struct Inner: Sendable {
        var state: GatewayState
        var wanted = false
        var resyncing = false
        var inFlight = 0
        var mismatch: String?
        var closed = false
    }

    let configuration: Gateway.Configuration
    let state: Mutex<Inner>
    let onUpdate: @Sendable (GatewayUpdate) -> Void
    let log: @Sendable (String) -> Void
    let onMismatch: @Sendable (String) -> Void
    let wake = DispatchSemaphore(value: 0)
    let urlSource = Mutex<(@Sendable () -> String?)?>(nil)

    init(
        configuration: Gateway.Configuration, onUpdate: @escaping @Sendable (GatewayUpdate) -> Void,
        log: @escaping @Sendable (String) -> Void, onMismatch: @escaping @Sendable (String) -> Void
    ) {
        self.configuration = configuration
        state = Mutex(
            Inner(
                state: GatewayState(
                    viewers: configuration.viewers, allViewers: configuration.allViewers,
                    partitions: configuration.partitions)))
        self.onUpdate = onUpdate
        self.log = log
        self.onMismatch = onMismatch
    }

    var reconnectedURL: (@Sendable () -> String?)? {
        get { urlSource.withLock { $0 } }
        set { urlSource.withLock { $0 = newValue } }
    }

    var viewersNow: Set<String> { state.withLock { $0.state.viewers } }

    func close() {
        let first = state.withLock { inner in
            defer { inner.closed = true }
            return !inner.closed
        }
        if first { wake.signal() }
    }

    // MARK: Messages

    func take(_ message: NatsMessage) {
        state.withLock { $0.inFlight += 1 }
        if configuration.slow > .zero {
            pause(configuration.slow) // busy on purpose: a slow gateway
        }
        let resync: (Int, Int, Int)? = state.withLock { inner in
            defer { inner.inFlight -= 1 }
            let outcome = inner.state.take(body: message.data, headers: message.headers)
            for update in outcome.updates { onUpdate(update) }
            if outcome.wantsResync, let p = outcome.partition, let epoch = outcome.epoch,
                let previous = outcome.previousEpoch
            {
                return (p, epoch, previous)
            }
            return nil
        }
        if let (p, epoch, previous) = resync {
            log("partition \(p): new epoch \(epoch) (was \(previous)): resync")
            wantResync()
        }
    }

    /// `typingd.owner.P`: a shard that has just become its partition's owner.
    func owner(_ message: NatsMessage) {
        guard let body = JSONValue.parse(message.data), let p = body["partition"]?.int else { return }
        checkBuckets(p, body["viewer_buckets"]?.int)
    }

    /// Stops the gateway when a shard publishes by another number of viewer
    /// buckets: its viewers' indicators go to subjects it does not subscribe to.
    func checkBuckets(_ p: Int, _ buckets: Int?) {
        guard let buckets, buckets != configuration.viewerBuckets, !configuration.allViewers else { return }
        let text =
            "partition \(p)'s shard sends indicators in \(buckets) viewer buckets, this gateway subscribes by "
            + "\(configuration.viewerBuckets) (--viewer-buckets, VIEWER_BUCKETS): give both the same"
        let first = state.withLock { inner in
            guard inner.mismatch == nil else { return false }
            inner.mismatch = text
            return true
        }
        if first { onMismatch(text) }
    }

    // MARK: Resync

    func wantResync() {
        guard configuration.resync else { return }
        state.withLock { $0.wanted = true }
        wake.signal()
    }

    func slowConsumer() {
        let count = state.withLock { inner in
            inner.state.counts.slowConsumer += 1
            return inner.state.counts.slowConsumer
        }
        if [1, 10, 100, 1000, 10000].contains(count) {
            log("slow consumer: messages dropped (\(count) so far): resync")
        }
        wantResync()
    }

    func reconnected() {
        state.withLock { $0.state.counts.reconnects += 1 }
        log("reconnected to \(reconnectedURL?() ?? "?"): resync")
        wantResync()
    }

    func resyncLoop(_ connection: NatsConnection) {
        while true {
            wake.wait()
            let go: Bool? = state.withLock { inner in
                if inner.closed { return nil }
                guard inner.wanted else { return false }
                inner.wanted = false
                inner.resyncing = true
                return true
            }
            guard let go else { return }
            guard go else { continue }
            do {
                try resync(connection, patience: nil)
            } catch {
                log("resync failed: \(error)")
                state.withLock { $0.wanted = true }
                wake.signal()
                pause(.milliseconds(500))
            }
            state.withLock { $0.resyncing = false }
        }
    }

    var isClosed: Bool { state.withLock { $0.closed } }

    func resync(_ connection: NatsConnection, patience: Double?) throws(NatsError) {
        let (number, viewers) = state.withLock { inner in
            inner.state.counts.resyncs += 1
            return (inner.state.counts.resyncs, inner.state.viewers.sorted())
        }
        let started = ContinuousClock.now
        let all = Set(0..<configuration.partitions)
        var missing: [String: Set<Int>] = [:]
        for viewer in viewers { missing[viewer] = all }
        var delay = 0.2
        while !missing.isEmpty {
            let taken = try ask(connection, missing)
            for (viewer, partitions) in taken {
                missing[viewer]?.subtract(partitions)
                if missing[viewer]?.isEmpty == true { missing[viewer] = nil }
            }
            if missing.isEmpty { break }
            let elapsed = Self.seconds(started.duration(to: .now))
            if let patience, elapsed > patience {
                log(
                    "resync: \(missing.count) viewers without an answer from every partition after "
                        + "\(Self.fixed(elapsed, 1)) s; left")
                return
            }
            if isClosed { return }
            state.withLock { $0.state.counts.resyncRetries += 1 }
            pause(.seconds(delay))
            delay = min(delay * 2, 2.0)
        }
        log(
            "resync \(number) done in \(Self.fixed(Self.seconds(started.duration(to: .now)), 2)) s for \(viewers.count) viewers"
        )
    }

    /// One request per viewer, all at once, each answered on its own inbox
    /// subject; waits up to 1 s for every partition asked. The partitions whose
    /// answer was taken, per viewer.
    func ask(_ connection: NatsConnection, _ missing: [String: Set<Int>]) throws(NatsError) -> [String: Set<Int>] {
        let viewers = missing.keys.sorted()
        let inbox = connection.newInbox()
        let subscription = try connection.subscribe(inbox + ".*")
        defer { subscription.unsubscribe() }
        try subscription.setPendingLimits(messages: -1, bytes: -1)
        for (index, viewer) in viewers.enumerated() {
            var body: [UInt8] = Array("{\"viewer\":".utf8)
            JSONValue.writeString(viewer, to: &body)
            body.append(UInt8(ascii: "}"))
            try connection.publish(NatsMessage(subject: Names.resyncSubject, reply: "\(inbox).\(index)", data: body))
        }
        state.withLock { $0.state.counts.resyncRequests += viewers.count }
        var best = [[Int: ResyncAnswer]](repeating: [:], count: viewers.count)
        var done = [Bool](repeating: false, count: viewers.count)
        var remaining = viewers.count
        var taken: [String: Set<Int>] = [:]
        let deadline = ContinuousClock.now + .seconds(1)
        let prefix = inbox + "."
        while remaining > 0 {
            let left = ContinuousClock.now.duration(to: deadline)
            let ms = left.milliseconds
            if ms <= 0 { break }
            guard let message = try subscription.next(timeout: ms) else { break }
            guard message.subject.hasPrefix(prefix), let index = Int(message.subject.dropFirst(prefix.count)),
                viewers.indices.contains(index), let answer = ResyncAnswer(body: message.data)
            else { continue }
            checkBuckets(answer.partition, answer.viewerBuckets)
            let asked = missing[viewers[index]] ?? []
            guard asked.contains(answer.partition), !done[index] else { continue }
            if let held = best[index][answer.partition], held.stamp.epoch >= answer.stamp.epoch { continue }
            best[index][answer.partition] = answer
            if best[index].count == asked.count {
                done[index] = true
                remaining -= 1
                taken[viewers[index]] = apply(best[index], for: viewers[index])
            }
        }
        for index in viewers.indices where !done[index] {
            taken[viewers[index]] = apply(best[index], for: viewers[index])
        }
        return taken
    }

    /// Applies the answers taken for `viewer`; the partitions accepted.
    func apply(_ answers: [Int: ResyncAnswer], for viewer: String) -> Set<Int> {
        state.withLock { inner in
            var taken = Set<Int>()
            for p in answers.keys.sorted() {
                guard let answer = answers[p], let updates = inner.state.take(answer: answer, for: viewer) else {
                    continue
                }
                taken.insert(p)
                for update in updates { onUpdate(update) }
            }
            return taken
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// `value` with `digits` decimals (as Python's `{:.2f}`).
    static func fixed(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (value * scale).rounded()
        guard scaled.isFinite, abs(scaled) < 1e15 else { return String(value) }
        let whole = Int(scaled)
        let divisor = Int(scale)
        let fraction = String(abs(whole) % divisor)
        let padded = String(repeating: "0", count: max(0, digits - fraction.count)) + fraction
        return "\(whole / divisor)" + (digits > 0 ? ".\(padded)" : "")
    }
}
