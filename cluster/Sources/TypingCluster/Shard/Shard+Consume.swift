import Foundation
import NatsClient
import TypingCore
import TypingProtocol

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
        consumer.ackWait = config.ackWait.milliseconds
        consumer.maxAckPending = config.maxAckPending
        consumer.replicas = config.consumerReplicas
        consumer.memory = true
        try call("making the consumer") { try js.addConsumer(Names.stream, consumer) }
        // A new inbox: what the old consumer still sends is neither applied nor acknowledged.
        puller = try call("subscribing to the consumer's deliveries") {
            Puller(try PullInbox(connection, stream: Names.stream, durable: durable))
        }
    }

    /// The consuming loop: pulls, and performs what the rules (``ConsumeState``)
    /// say for each turn, pull and message.
    func consume() throws {
        while !isStopping {
            guard try perform(rules.beginTurn(now: .now)) else { continue }
            guard let puller else { try startConsumer(); continue }
            let messages: [NatsMessage]
            do {
                messages = try puller.next(batch: config.fetch, wait: 1000)
            } catch {
                try perform(rules.pullFailed(now: .now), failure: error)
                continue
            }
            guard try perform(rules.pulled(count: messages.count, now: .now)) else { continue }
            try applyFetch(messages)
        }
    }

    /// A fetch: each message as the rules place it, then the run published and
    /// the last message acknowledged.
    func applyFetch(_ messages: [NatsMessage]) throws {
        for message in messages {
            try perform(
                rules.delivered(seq: message.streamSequence, consumerSeq: message.consumerSequence),
                message: (message.headers, message.data))
        }
        if let last = messages.last {
            try perform(rules.fetchEnded(), ack: last)
        }
    }

    /// Performs the rules' actions in order: false when one ends the turn.
    @discardableResult
    func perform(
        _ actions: [ConsumeState.Action], message: (headers: [String: String], body: [UInt8])? = nil,
        ack: NatsMessage? = nil, failure: (any Error)? = nil
    ) throws -> Bool {
        for action in actions {
            switch action {
            case .finishCatchUp:
                try finishCatchUp()
            case .takeSnapshot:
                takeSnapshot()
            case .lookAtStream:
                let last = (try? js.lastMessage(Names.stream, subject: subject))??.streamSequence
                guard try perform(rules.looked(last: last)) else { return false }
            case .countStall:
                count(.consumerStalls)
            case .apply(let seq, let mode):
                guard let message else { continue }
                try apply(seq, mode, headers: message.headers, body: message.body)
            case .addToRun(let seq, let opens):
                guard let message else { continue }
                addToRun(seq, opens: opens, headers: message.headers, body: message.body)
            case .endRun(let first, let last):
                try endRun(first: first, last: last)
            case .fillGap(let before, let gap):
                try fillGap(before: before, gap)
                guard try perform(rules.gapFilled(now: .now), message: message) else { return false }
            case .ackLast:
                if let ack, let puller {
                    do { try puller.inbox.ack(ack) } catch { log("ack of seq \(ack.streamSequence) failed (\(error))") }
                }
            case .logPullFailed:
                log("pull failed (\(failure.map { "\($0)" } ?? "")); retrying")
            case .logPullingAgain(let after):
                log("pulling again after \(String(format: "%.2f", after.seconds)) s")
            case .probeConsumer:
                let answered = (try? js.consumerInfo(Names.stream, durable)) != nil
                guard try perform(rules.probed(answered: answered, now: .now), failure: failure) else { return false }
            case .remakeConsumer(let why):
                log("\(why): making it anew after seq \(written)")
                try startConsumer()
                count(.consumersRemade)
                rules.remade(now: .now)
            case .sleep(let duration):
                shared.sleep(duration)
            case .nextTurn:
                return false
            }
        }
        return true
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
                if end - start >= placeholder.count
                    && bytes[start..<(start + placeholder.count)].elementsEqual(placeholder)
                {
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
    func fillGap(before seq: UInt64, _ gap: ConsumeState.Gap) throws {
        var taken: [UInt64] = []
        defer {
            if let first = taken.first, let last = taken.last {
                let why =
                    switch gap {
                    case .lostDelivery: "a delivery was lost before seq \(seq)"
                    case .stalled(let last):
                        "the consumer delivered nothing new for 4 s while the stream held up to seq \(last)"
                    }
                log(
                    "\(why): \(taken.count == 1 ? "message \(first)" : "messages \(first)..\(last) (\(taken.count))") applied from the stream"
                )
            }
        }
        while true {
            let from = written + 1
            guard
                let found = try call(
                    "reading a message",
                    { () throws -> StoredMessage? in
                        try StreamReads.next(
                            connection, stream: Names.stream, subject: subject, from: from,
                            timeout: config.callTimeout.milliseconds)
                    }), let stored = found, stored.sequence < seq
            else { return }
            taken.append(stored.sequence)
            count(.gapsFilled)
            try perform(rules.filled(stored.sequence), message: (stored.headers, stored.data))
        }
    }
}
