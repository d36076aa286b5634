import Foundation
import NatsClient
import Synchronization
import TypingCore
@_spi(Daemon) import TypingProtocol

extension Shard {
    // MARK: Consuming


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
}
