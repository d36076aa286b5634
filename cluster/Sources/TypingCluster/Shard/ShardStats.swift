import Foundation
import NatsClient

/// What a shard counts. Each counter's stats name, help and place are here once:
/// the JSON, the Prometheus text and the `dropped` total come from
/// ``ShardShared/statsTable``.
package enum ShardCounter: String, CaseIterable, Sendable {
    case eventsPublished = "events_published"
    case messagesPublished = "messages_published"
    case droppedLines = "dropped_lines"
    case droppedEvents = "dropped_events"
    case undecodable
    case snapshotsStored = "snapshots_stored"
    case snapshotsFailed = "snapshots_failed"
    case snapshotsSkipped = "snapshots_skipped"
    case ticks
    case ticksSkipped = "ticks_skipped"
    case consumersRemade = "consumers_remade"
    case retries
    case gapsFilled = "gaps_filled"
    case consumerStalls = "consumer_stalls"
    case linesMissing = "lines_missing"

    var help: String {
        switch self {
        case .eventsPublished: "Events published (indicators, announcements, replies, errors)."
        case .messagesPublished: "Messages of events published."
        case .droppedLines: "Lines not applied: a router's line applied before (a message stored again)."
        case .droppedEvents: "Events whose publish failed."
        case .undecodable: "Stored messages that do not decode (not applied)."
        case .snapshotsStored: "Snapshots stored."
        case .snapshotsFailed: "Snapshots that could not be stored."
        case .snapshotsSkipped: "Snapshots not taken: the last one was still being stored."
        case .ticks: "Ticks published into the partition."
        case .ticksSkipped: "Ticks not needed: stamped commands had moved the partition's clock."
        case .consumersRemade: "Times the consumer was made anew (it stalled or stopped answering)."
        case .retries: "Cluster calls tried again."
        case .gapsFilled: "Messages read from the stream, not delivered by the consumer (a lost delivery, a stall)."
        case .consumerStalls: "Times the consumer delivered nothing while the stream held more."
        case .linesMissing:
            "Lines a router numbered for this partition that never reached the stream (gaps in its numbers)."
        }
    }

    /// Counted in the stats' `dropped`.
    package var isDrop: Bool { [.droppedLines, .droppedEvents, .snapshotsSkipped, .undecodable].contains(self) }
}

/// A shard's counts.
package struct ShardCounts {
    package var values = [Int](repeating: 0, count: ShardCounter.allCases.count)
    /// The last sequence applied whose events are published.
    package var applied: UInt64 = 0
    /// Each router's last line applied.
    package var routers: [String: Int] = [:]

    package init() {}

    package subscript(counter: ShardCounter) -> Int {
        get { values[ShardCounter.allCases.firstIndex(of: counter) ?? 0] }
        set { values[ShardCounter.allCases.firstIndex(of: counter) ?? 0] = newValue }
    }

    package var dropped: Int { ShardCounter.allCases.filter(\.isDrop).reduce(0) { $0 + self[$1] } }
}

extension ShardShared {
    /// The stats, in their order (the JSON's).
    package static let statsTable: [Stat] = {
        func counter(_ c: ShardCounter) -> Stat { Stat(c.rawValue, .counter, c.help) }
        return [
            Stat("partition", .info, "The partition."),
            Stat("role", .info, "owner or standby."),
            Stat("epoch", .gauge, "The lease's epoch (0 while a standby)."),
            Stat("applied_seq", .gauge, "The last stream sequence applied and published."),
            Stat("stream_last_seq", .gauge, "The partition's last stream sequence."),
            Stat("lag", .gauge, "Messages the consumer has not delivered or has not had acknowledged."),
            counter(.eventsPublished), counter(.messagesPublished),
            Stat(
                "dropped", .counter,
                "Lines, events and snapshots dropped, and undecodable messages: the sum of the four."),
            counter(.droppedLines), counter(.droppedEvents), counter(.undecodable),
            counter(.snapshotsStored), counter(.snapshotsFailed), counter(.snapshotsSkipped),
            counter(.ticks), counter(.ticksSkipped), counter(.consumersRemade), counter(.retries),
            Stat("lease_renewals", .counter, "Lease renewals."),
            counter(.gapsFilled), counter(.consumerStalls), counter(.linesMissing),
            Stat("routers", .info, "Each router's last line applied."),
            Stat("pid", .info, "The process id."),
            Stat("viewer_buckets", .gauge, "Viewer buckets (VIEWER_BUCKETS)."),
            Stat("lease_owner", .info, "Who holds the lease: host and pid."),
            Stat("uptime_s", .gauge, "Seconds since the shard started.")
        ]
    }()

    /// The stats' values, by name.
    func stats(js statsJS: JetStream) -> (role: String, values: [String: Any]) {
        let (c, lease, owner) = state.withLock { ($0.counts, $0.lease, $0.isOwner) }
        let role = owner ? "owner" : "standby"
        var values: [String: Any] = [
            "partition": p, "role": role, "epoch": lease?.epoch ?? 0, "applied_seq": c.applied,
            "dropped": c.dropped, "lease_renewals": lease?.renewals.load(ordering: .relaxed) ?? 0,
            "routers": StatsText.Raw(json: String(decoding: Self.jsonObject(c.routers), as: UTF8.self)),
            "pid": Int(getpid()), "viewer_buckets": config.buckets,
            "lease_owner": (owner ? lease?.owner : lease?.holderID()) ?? "",
            "uptime_s": (Double(monotonicNanos() - started) / 1e6).rounded() / 1000
        ]
        for counter in ShardCounter.allCases { values[counter.rawValue] = c[counter] }
        values["stream_last_seq"] = (try? statsJS.lastMessage(Names.stream, subject: subject)).map {
            $0?.streamSequence ?? 0
        }
        if owner, let info = try? statsJS.consumerInfo(Names.stream, durable) {
            values["lag"] = info.pending + UInt64(max(0, info.ackPending))
        }
        return (role, values)
    }

    /// Answers stats requests: JSON, or Prometheus text for a body "prometheus".
    func serveStats(_ subscription: Subscription) {
        guard let statsJS = try? JetStream(connection, wait: 1000) else { return }
        while !isStopping {
            guard let request = try? subscription.next(timeout: 500), let reply = request.reply else { continue }
            let (role, values) = stats(js: statsJS)
            let body: String
            if String(decoding: request.data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                == "prometheus"
            {
                body = StatsText.prometheus(
                    Self.statsTable, values, prefix: "typingd_shard_",
                    labels: "partition=\"\(p)\",role=\"\(role)\",pid=\"\(getpid())\"")
            } else {
                body = StatsText.json(Self.statsTable, values)
            }
            try? connection.publish(NatsMessage(subject: reply, data: Array(body.utf8)))
        }
    }

    /// Answers resync requests: the viewer's last indicator per screen, at the last sequence applied.
    func serveResync(_ subscription: Subscription) {
        while !isStopping {
            guard let request = try? subscription.next(timeout: 500), let reply = request.reply else { continue }
            let viewer =
                (try? JSONSerialization.jsonObject(with: Data(request.data)) as? [String: Any])?["viewer"] as? String
            let (lines, applied, epoch) = state.withLock { state in
                (viewer.map { state.shown.of($0) } ?? [], state.counts.applied, state.lease?.epoch ?? 0)
            }
            var body = Array(
                "{\"partition\":\(p),\"epoch\":\(epoch),\"seq\":\(applied),\"viewer_buckets\":\(config.buckets),\"indicators\":["
                    .utf8)
            for (index, line) in lines.enumerated() {
                if index > 0 { body.append(0x2C) }
                body += line
            }
            body += Array("]}".utf8)
            try? connection.publish(
                NatsMessage(
                    subject: reply,
                    headers: [
                        Names.Header.epoch: String(epoch), Names.Header.partition: String(p),
                        Names.Header.sequence: String(applied)
                    ], data: body))
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
}
