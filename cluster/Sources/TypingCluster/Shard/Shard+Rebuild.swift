import Foundation
import NatsClient
import TypingCore
import TypingProtocol

extension Shard {
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
        var written: UInt64 = 0
        let snapshot = try loadSnapshot()
        if let (head, body) = snapshot {
            // The body: a line of JSON (seq, at, epoch, routers), then the rebuild's commands.
            let newline = body.firstIndex(of: 0x0A) ?? body.count
            if let meta = try? JSONSerialization.jsonObject(with: Data(body[..<newline])) as? [String: Any],
                let routers = meta["routers"] as? [String: NSNumber]
            {
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
        let published: UInt64
        if snapshot != nil {
            published = written
        } else {
            published =
                (try call("reading the consumer", missing: true) { try js.consumerInfo(Names.stream, durable).ackFloor })
                ?? 0
        }
        let last =
            (try call("reading the partition's last message", missing: true) {
                try js.lastMessage(Names.stream, subject: subject)?.streamSequence
            }) ?? nil
        rules = ConsumeState(
            written: written, published: published, catchUpTarget: last ?? 0,
            snapshotEvery: config.snapshotEvery, now: .now)
        shared.state.withLock { $0.counts.applied = written }
        shared.clock.store(pipeline.session.engine.now, ordering: .relaxed)
        try startConsumer()
    }

    /// The last snapshot, believed missing at once only by a shard the cluster has
    /// answered every time; else only after 3 such answers in a row, a second apart.
    func loadSnapshot() throws -> (head: SnapshotStore.Head, body: [UInt8])? {
        let store = SnapshotStore(
            backend: NatsSnapshotBackend(js: js, connection: connection, timeout: config.snapshotTimeout), partition: p)
        var confirmations = 0
        var brokenTries = 0
        while true {
            let before = shared.state.withLock { $0.counts[.retries] }
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
            let retries = shared.state.withLock { $0.counts[.retries] }
            if retries == 0 { return nil }
            confirmations = retries != before ? 1 : confirmations + 1
            if confirmations >= 3 { return nil }
            log("no snapshot, after the cluster failed to answer; asking again")
            shared.sleep(.seconds(1))
        }
    }

    /// Ends the catch-up: each screen's last backlog indicator is published once,
    /// then each announcement the backlog made to a screen that still shows it.
    func finishCatchUp() throws {
        let (kept, announced) = output.publishBacklog()
        try publishTouched(seq: written, first: written, audit: false)
        let ms = (monotonicNanos() - catchUpStarted) / 1_000_000
        log("connected to \(connection.connectedURL ?? "no server")")
        log(
            "caught up in \(ms) ms: snapshot after seq \(snapshotBase) (\(snapshotEvents) events), \(rules.replayed) messages replayed (\(rules.quiet) published before: no output), \(kept) backlog indicators and \(announced) announcements published; now at seq \(written), epoch \(lease?.epoch ?? 0)"
        )
        try? connection.publish(
            NatsMessage(
                subject: "typingd.owner.\(p)",
                data: Array(
                    "{\"partition\":\(p),\"epoch\":\(lease?.epoch ?? 0),\"viewer_buckets\":\(config.buckets)}".utf8)))
        do {
            let resync = try connection.subscribe(Names.resyncSubject)
            let shared = shared
            shared.spawn { shared.serveResync(resync) }
        } catch {
            log("cannot subscribe to \(Names.resyncSubject): \(error)")
        }
    }
}
