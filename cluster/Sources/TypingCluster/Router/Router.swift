import Foundation
import NatsClient
import TypingProtocol

/// The router: reads command lines and stores each in the stream of its
/// partition, in messages of many lines; never loses or doubles a line across
/// restarts, and waits out any outage.
///
/// - **Routing**: ``Partition/route(line:among:)``, the rule the shards' engines
///   share: a conversation's partition, every partition for `offline`, `user`,
///   `tick`, `stats` and `snapshot`, partition 0 for a line that is no command.
/// - **Messages**: in rounds (``SendRule``): lines after a quiet moment go at
///   once; under load every partition's waiting lines go together, rounds at
///   least ``Configuration/linger`` apart, one message in flight per partition;
///   headers `Nats-Msg-Id: NAME:P:FIRST:COUNT`, `Typingd-Router: NAME`,
///   `Typingd-Lines: FIRST`, and `Typingd-Encoding: deflate` when deflated.
/// - **Checkpoint**: the input position *stored*, in key NAME of
///   ``Names/routerBucket``; a restart resumes there.
/// - **Name fence**: key NAME of ``Names/routerNameBucket`` is held while the
///   router runs; a second router with the same name is refused before it routes
///   a line (``RouterFailure/nameTaken``).
public final class Router: @unchecked Sendable {
    /// `--linger-ms`'s default: rounds at least this far apart. A line read while a
    /// round is out waits for it and then for the rest of this, so it bounds the
    /// router's part of a keystroke's delay under load.
    public static let defaultLinger = Duration.milliseconds(25)

    /// How the router works. Every time is a `Duration`; the command line gives
    /// them in the units its options name (`--linger-ms`, `--ack-timeout` seconds...).
    public struct Configuration: Sendable {
        public var name = "router"
        public var partitions = 4
        public var stamp = false
        /// Rounds of messages begin at least this far apart (``Router/defaultLinger``).
        public var linger = Router.defaultLinger
        public var batchLines = 4000
        public var batchBytes = 512 * 1024
        public var queueLines = 20_000
        /// The deadline of one publish or checkpoint write.
        public var ackTimeout = Duration.seconds(2)
        /// How often the stored position is checkpointed.
        public var checkpointEvery = Duration.seconds(1)
        public var rate = 0.0
        public var inputOffset = 0
        public var fromStart = false
        /// stdin is a new input for this name: read from its first byte, its lines
        /// numbered on after those the name sent before (the checkpoint's).
        public var newInput = false
        public var replicas = 3
        /// Whether messages are deflated (`Typingd-Encoding: deflate`).
        public var deflate = true
        public init() {}
    }

    /// One partition's lines on their way.
    struct Part {
        let index: Int
        let subject: String
        /// Lines waiting, each with its LF.
        var bytes: [UInt8] = []
        var ends: [Int] = []
        var head = 0
        var sentAt = 0.0
        var routed: Int
        var stored: Int
        var messages = 0
        /// A message of this partition is in flight (taken in a round, not yet stored).
        var busy = false
        /// The batch a round took for this partition's sender to publish.
        var ready: Batch? = nil
        var pendingCount: Int { ends.count - head }
    }

    /// Lines taken for one message: their bytes, the number of the first among
    /// the partition's lines, and how many.
    struct Batch {
        let body: [UInt8]
        let first: Int
        let count: Int
    }

    let configuration: Configuration
    let connection: NatsConnection
    let js: JetStream
    var checkpoints: KeyValue?
    var fence: NameFence?
    let lock = NSCondition()
    var parts: [Part] = []
    /// (end offset, input lines, lines routed per partition), in input order.
    var segments: [(offset: Int, lines: Int, counts: [Int])] = []
    var segmentHead = 0
    var readOffset = 0, readLines = 0
    var storedOffset = 0, storedLines = 0, storedCounts: [Int] = []
    var checkpointed = 0
    var refused = 0
    /// Lines longer than ``maxLine`` (counted in ``refused`` too), dropped as read.
    var tooLong = 0
    var stopping = false
    var stopSignal = ""
    var readingDone = false
    var state = "starting"
    var retries = 0
    var blocked = 0, blockedSince = 0.0, blockedTotal = 0.0
    var checkpointsWritten = 0, checkpointFailures = 0
    var streamCreated: Int64 = 0
    /// The input's first bytes, and what the checkpoint resumed from kept of them.
    var head = InputHead()
    var keptIdentity: InputHead.Identity?
    var lastAt = 0
    /// The reader waits for room (a partition has --queue-lines waiting): a sender
    /// that takes a batch wakes it.
    var readerWaiting = false
    /// How often a sender woke (for the tests: a wake-up is the router's cost per
    /// message when lines trickle in).
    var senderWakeups = 0
    /// When the last round of messages began, and how many began.
    var lastRound = -Double.infinity
    var rounds = 0
    let rule: SendRule
    let started = monotonicSeconds()
    let maxLine: Int
    let batchBytes: Int

    /// A router on `connection`; call ``run(input:)``.
    public init(configuration: Configuration, connection: NatsConnection) throws(NatsError) {
        self.configuration = configuration
        self.connection = connection
        js = try JetStream(connection, wait: configuration.ackTimeout.milliseconds)
        maxLine = max(1024, connection.maxPayload - 4096)
        batchBytes = min(configuration.batchBytes, maxLine)
        rule = SendRule(linger: configuration.linger.seconds, batchLines: configuration.batchLines)
    }

    func log(_ text: String) { clusterLog("router", text) }

    // MARK: Position

    /// Moves the stored position past every read block whose lines are all stored.
    func advance() {
        while segmentHead < segments.count {
            let segment = segments[segmentHead]
            for index in parts.indices where parts[index].stored < segment.counts[index] { return }
            storedOffset = segment.offset
            storedLines = segment.lines
            storedCounts = segment.counts
            segmentHead += 1
        }
        if segmentHead > 1024 && segmentHead * 2 > segments.count {
            segments.removeFirst(segmentHead)
            segmentHead = 0
        }
    }

    func checkpointValue() -> [UInt8] {
        var object: [String: Any] = [
            "offset": storedOffset, "lines": storedCounts, "partitions": configuration.partitions,
            "input_lines": storedLines, "stream_created": streamCreated
        ]
        if let identity = head.identity(before: storedOffset) ?? keptIdentity {
            object["input_head_bytes"] = identity.length
            object["input_head_fnv64"] = identity.digest
        }
        return Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }

    /// Writes the checkpoint once (periodic), or until it is stored (final).
    func save(final: Bool) {
        lock.lock()
        advance()
        let offset = storedOffset
        if offset == checkpointed && !final { lock.unlock(); return }
        let value = checkpointValue()
        lock.unlock()
        guard let checkpoints else { return }
        var delay = 0.05
        let since = monotonicSeconds()
        var logged = since
        while true {
            do {
                _ = try checkpoints.put(configuration.name, value)
                lock.lock()
                checkpointsWritten += 1
                checkpointed = max(checkpointed, offset)
                lock.unlock()
                return
            } catch {
                lock.lock(); checkpointFailures += 1; lock.unlock()
                if !final { return }
                let now = monotonicSeconds()
                if now - logged >= 5 {
                    log("waiting for the cluster: checkpoint not stored for \(Int(now - since)) s (\(error))")
                    logged = now
                }
                pause(.seconds(delay))
                delay = min(delay * 2, 2)
            }
        }
    }

    // MARK: Reading

    func now() -> Int {
        lastAt = max(lastAt, wallMilliseconds())
        return lastAt
    }

    /// Routes the lines of `chunk`, the input's next bytes, as `input` frames them,
    /// until the chunk is used up or `pauseAfter` lines are routed; returns the
    /// bytes consumed (the rest is to be routed again) and the lines routed.
    func route(_ chunk: UnsafeRawBufferPointer, input: inout RouterInput, pauseAfter: Int = .max) throws(RouterFailure)
        -> (consumed: Int, lines: Int)
    {
        var sink = LineSink(
            router: self, rules: LineRouting(partitions: parts.count, maxLine: maxLine, stamp: configuration.stamp),
            time: configuration.stamp ? now() : 0, linesBefore: input.linesBefore, pauseAfter: pauseAfter)
        lock.lock()
        defer { lock.unlock() }
        let before = parts.map(\.pendingCount)
        let consumed = try input.feed(chunk, to: &sink)
        ended(input)
        if sendersMustWake(before: before) { lock.broadcast() }
        return (consumed, sink.lines)
    }

    /// Ends the input: routes a final line without LF. Holding no lock.
    func finish(_ input: inout RouterInput) {
        var sink = LineSink(
            router: self, rules: LineRouting(partitions: parts.count, maxLine: maxLine, stamp: configuration.stamp),
            time: configuration.stamp ? now() : 0, linesBefore: input.linesBefore, pauseAfter: .max)
        lock.lock()
        defer { lock.unlock() }
        let before = parts.map(\.pendingCount)
        input.finish(to: &sink)
        ended(input)
        if sendersMustWake(before: before) { lock.broadcast() }
    }

    /// Notes the lines `input` ended: the read position moves to their end, a
    /// position a checkpoint may name. Holding the lock.
    func ended(_ input: RouterInput) {
        guard input.lineEnd > readOffset else { return }
        readOffset = input.lineEnd
        readLines = input.lines
        segments.append((readOffset, readLines, parts.map(\.routed)))
    }

    /// Routes each line the framer hands over, the router's lock held.
    struct LineSink: FrameHandler {
        let router: Router
        let rules: LineRouting
        let time: Int
        let linesBefore: Int
        /// The framer pauses once this many lines are routed.
        let pauseAfter: Int
        var lines = 0

        var wantsPause: Bool { lines >= pauseAfter }

        mutating func handleLine(_ line: UnsafeRawBufferPointer, number: Int) {
            lines += 1
            let router = router
            let outcome = rules.route(line, time: time) { p, bytes in
                router.parts[p].bytes.append(contentsOf: bytes)
                router.parts[p].bytes.append(0x0A)
                router.parts[p].ends.append(router.parts[p].bytes.count)
                router.parts[p].routed += 1
            }
            if case .refused(let why) = outcome {
                router.refused += 1
                router.log("refused \(why)")
            }
        }

        mutating func handleTooLong(number: Int, limit: Int) {
            lines += 1
            router.refused += 1
            router.tooLong += 1
            router.log(
                "refused input line \(linesBefore + number): longer than \(limit) bytes (the cluster takes lines up to "
                    + "\(limit), a CR before the LF counted); dropped up to its LF as it is read")
        }
    }

    /// The send rule's view of the partitions now. Holding the lock.
    func sendState() -> SendRule.State {
        var state = SendRule.State(lastRound: lastRound, draining: readingDone || stopping)
        for part in parts {
            if part.busy {
                state.inFlight += 1
            } else {
                state.waiting += part.pendingCount
                state.fullest = max(state.fullest, part.pendingCount)
            }
        }
        return state
    }

    /// Whether lines just routed (the partitions had `before` lines waiting) call
    /// for a sender now: the send rule says to begin a round (lines after a quiet
    /// moment, a full batch). Else a sender waiting out a round or the linger
    /// finds them then, and lines read meanwhile wake nobody. Holding the lock.
    func sendersMustWake(before: [Int]) -> Bool {
        var grew = false
        for index in parts.indices where parts[index].pendingCount > before[index] {
            if before[index] == 0 || parts[index].pendingCount >= configuration.batchLines { grew = true }
        }
        guard grew else { return false }
        return rule.decide(sendState(), now: monotonicSeconds()) == .sendNow
    }

    // MARK: Sending

    /// Takes partition `p`'s next batch: its waiting lines up to --batch-lines
    /// and the byte limit. Holding the lock.
    func takeBatch(_ p: Int) -> Batch {
        var count = min(parts[p].pendingCount, configuration.batchLines)
        let base = parts[p].head == 0 ? 0 : parts[p].ends[parts[p].head - 1]
        while count > 1 && parts[p].ends[parts[p].head + count - 1] - base > batchBytes { count /= 2 }
        let end = parts[p].ends[parts[p].head + count - 1]
        let body = Array(parts[p].bytes[base..<end])
        parts[p].head += count
        if parts[p].head == parts[p].ends.count {
            parts[p].bytes.removeAll(keepingCapacity: true)
            parts[p].ends.removeAll(keepingCapacity: true)
            parts[p].head = 0
        } else if parts[p].head > 4096 && parts[p].head * 2 > parts[p].ends.count {
            let cut = parts[p].ends[parts[p].head - 1]
            parts[p].bytes.removeFirst(cut)
            parts[p].ends.removeFirst(parts[p].head)
            for index in parts[p].ends.indices { parts[p].ends[index] -= cut }
            parts[p].head = 0
        }
        return Batch(body: body, first: parts[p].stored + 1, count: count)
    }

    /// Begins a round: every partition with lines waiting and nothing in flight
    /// gets its batch, for its sender to publish. Holding the lock.
    func beginRound(at now: Double) {
        lastRound = now
        rounds += 1
        for p in parts.indices where !parts[p].busy && parts[p].pendingCount > 0 {
            parts[p].ready = takeBatch(p)
            parts[p].busy = true
            parts[p].sentAt = now
        }
        lock.broadcast()
    }

    /// The sender of partitions `mine`: publishes their batches as rounds give
    /// them (``SendRule``), one message in flight per partition.
    func send(_ mine: [Int]) {
        lock.lock()
        while true {
            if let p = mine.first(where: { parts[$0].ready != nil }), let batch = parts[p].ready {
                parts[p].ready = nil
                lock.unlock()
                var headers = [Names.Header.router: configuration.name, Names.Header.lines: String(batch.first)]
                var payload = batch.body
                if configuration.deflate, let packed = Deflate.compress(batch.body) {
                    payload = packed
                    headers[Names.Header.encoding] = "deflate"
                }
                publish(
                    NatsMessage(subject: parts[p].subject, headers: headers, data: payload),
                    id: "\(configuration.name):\(p):\(batch.first):\(batch.count)", partition: p)
                lock.lock()
                parts[p].stored += batch.count
                parts[p].messages += 1
                parts[p].busy = false
                advance()
                // The next round may begin (a sender waits for this one), and the reader may read on.
                lock.broadcast()
                continue
            }
            let now = monotonicSeconds()
            let state = sendState()
            switch rule.decide(state, now: now) {
            case .sendNow:
                beginRound(at: now)
                continue
            case .waitUntil(let due):
                _ = lock.wait(until: Date(timeIntervalSinceNow: max(0.0005, due - now)))
            case .idle:
                if state.draining && mine.allSatisfy({ !parts[$0].busy && parts[$0].pendingCount == 0 }) {
                    lock.unlock()
                    return
                }
                lock.wait()
            }
            senderWakeups += 1
        }
    }

    /// Publishes until JetStream stores it: no deadline but each call's.
    func publish(_ message: NatsMessage, id: String, partition p: Int) {
        var delay = 0.05
        var since: Double? = nil
        var logged = 0.0
        while true {
            fence?.waitUntilHeld()
            do {
                _ = try js.publish(message, id: id, timeout: configuration.ackTimeout.milliseconds)
                if let since {
                    lock.lock()
                    blocked -= 1
                    if blocked == 0 { blockedTotal += monotonicSeconds() - blockedSince }
                    lock.unlock()
                    log(
                        "partition \(p): stored after \(String(format: "%.1f", monotonicSeconds() - since)) s of waiting"
                    )
                }
                return
            } catch {
                let now = monotonicSeconds()
                lock.lock()
                retries += 1
                if since == nil {
                    if blocked == 0 { blockedSince = now }
                    blocked += 1
                }
                lock.unlock()
                if since == nil {
                    since = now
                    logged = now
                } else if let since, now - logged >= 5 {
                    log("waiting for the cluster: partition \(p) not stored for \(Int(now - since)) s (\(error))")
                    logged = now
                }
                pause(.seconds(delay))
                delay = min(delay * 2, 2)
            }
        }
    }

    // MARK: Stats

    /// The router's stats, in their order (the JSON's).
    package static let statsTable: [Stat] = [
        Stat("router", .info, "The router's --name."),
        Stat("state", .info, "starting, reading, draining or stopped."),
        Stat("partitions", .gauge, "Partitions (PARTITIONS)."),
        Stat("read_offset", .gauge, "Bytes of the input read."),
        Stat("lines_read", .counter, "Lines of the input read."),
        Stat("stored_offset", .gauge, "Bytes of the input whose lines are all stored."),
        Stat("lines_stored", .counter, "Lines stored."),
        Stat("checkpoint_offset", .gauge, "The input position last checkpointed."),
        Stat("partition_lines_routed", .gauge, "Lines routed to each partition."),
        Stat("partition_lines_stored", .gauge, "Lines stored in each partition's stream."),
        Stat("lines_pending", .gauge, "Lines read and not yet stored."),
        Stat("lines_refused", .counter, "Lines refused (the shards' own ids, too long for the servers)."),
        Stat("lines_too_long", .counter, "Lines dropped as they were read: longer than the limit."),
        Stat("messages_published", .counter, "Messages stored."),
        Stat("retries", .counter, "Publishes tried again."),
        Stat("blocked_partitions", .gauge, "Partitions whose queue is full (reading waits)."),
        Stat("blocked_s", .counter, "Seconds reading waited for a full queue."),
        Stat("checkpoints_written", .counter, "Checkpoints written."),
        Stat("checkpoint_failures", .counter, "Checkpoint writes that failed."),
        Stat("fence_renewals", .counter, "Renewals of the name fence."),
        Stat("uptime_s", .gauge, "Seconds since the router started.")
    ]

    /// The stats' values, by name.
    func stats() -> [String: Any] {
        lock.lock()
        defer { lock.unlock() }
        advance()
        let blockedSeconds = blockedTotal + (blocked > 0 ? monotonicSeconds() - blockedSince : 0)
        return [
            "router": configuration.name, "state": state, "partitions": configuration.partitions,
            "read_offset": readOffset, "lines_read": readLines,
            "stored_offset": storedOffset, "lines_stored": storedLines, "checkpoint_offset": checkpointed,
            "partition_lines_routed": parts.map(\.routed), "partition_lines_stored": parts.map(\.stored),
            "lines_pending": parts.reduce(0) { $0 + $1.pendingCount }, "lines_refused": refused,
            "lines_too_long": tooLong,
            "messages_published": parts.reduce(0) { $0 + $1.messages }, "retries": retries,
            "blocked_partitions": blocked, "blocked_s": (blockedSeconds * 1000).rounded() / 1000,
            "checkpoints_written": checkpointsWritten, "checkpoint_failures": checkpointFailures,
            "fence_renewals": fence?.renewals ?? 0,
            "uptime_s": ((monotonicSeconds() - started) * 1000).rounded() / 1000
        ]
    }

    func answerStats(_ request: NatsMessage) {
        guard let reply = request.reply else { return }
        let values = stats()
        let body: String
        if request.text.trimmingCharacters(in: .whitespacesAndNewlines) == "prometheus" {
            body = StatsText.prometheus(
                Self.statsTable, values, prefix: "typingd_router_",
                labels: "router=\"\(StatsText.escapeLabel(configuration.name))\"",
                state: ("typingd_router_state", values["state"] as? String ?? ""))
        } else {
            body = StatsText.json(Self.statsTable, values)
        }
        try? connection.publish(reply, Array(body.utf8))
    }
}
