import Foundation
import NatsClient
import Synchronization
import TypingCore
@_spi(Daemon) import TypingProtocol

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
    var applied: UInt64 = 0
    var routers: [String: Int] = [:]
}

extension Shard {
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
                                        "undecodable"]

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
