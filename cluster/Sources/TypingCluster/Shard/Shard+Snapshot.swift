import Foundation
import NatsClient
import TypingCore
import TypingPartitioning
import TypingProtocol

extension Shard {
    // MARK: Snapshots

    /// Takes a snapshot of the engine now (after seq `written`, whose events are
    /// published) and stores it in the background; one at a time.
    func takeSnapshot() {
        let shared = shared
        if shared.snapshotBusy.load(ordering: .acquiring) {
            count(.snapshotsSkipped)
            return
        }
        let seq = written
        output.mode = .capture
        output.capturedMembers.removeAll()
        output.capturedStreaks.removeAll()
        feed(Array("{\"cmd\":\"snapshot\",\"id\":\"typingd:snap:\(seq)\"}\n".utf8))
        output.mode = .publish
        let events = output.capturedMembers.count + output.capturedStreaks.count
        var head = Array(
            "{\"seq\":\(seq),\"at\":\(output.capturedAt),\"epoch\":\(lease?.epoch ?? 0),\"events\":\(events),\"routers\":"
                .utf8)
        head += ShardShared.jsonObject(admission.routers)
        head += Array("}\n".utf8)
        let meta = head
        let members = output.capturedMembers
        let streaks = output.capturedStreaks
        output.capturedMembers = []
        output.capturedStreaks = []
        shared.snapshotBusy.store(true, ordering: .releasing)
        let snapshot = ShardShared.Snapshot(
            seq: seq, epoch: lease?.epoch ?? 0, events: events, streamCreated: streamCreated)
        shared.spawn {
            shared.store(snapshot, body: meta + SnapshotRebuild.commands(members: members, streaks: streaks))
        }
    }
}

extension ShardShared {
    /// A snapshot to store: after which sequence, by which epoch.
    struct Snapshot: Sendable {
        let seq: UInt64
        let epoch: UInt64
        let events: Int
        let streamCreated: Int64
    }

    /// Stores a snapshot (on a thread of its own), then purges the stream behind it.
    func store(_ snapshot: Snapshot, body: [UInt8]) {
        defer { snapshotBusy.store(false, ordering: .releasing) }
        let seq = snapshot.seq
        let started = monotonicNanos()
        guard let js = try? JetStream(connection, wait: config.snapshotTimeout.milliseconds) else { return }
        let store = SnapshotStore(
            backend: NatsSnapshotBackend(js: js, connection: connection, timeout: config.snapshotTimeout), partition: p)
        let head: SnapshotStore.Head
        do {
            guard lease?.held == true else { return }
            head = try store.save(
                body, seq: seq, streamCreated: snapshot.streamCreated, epoch: snapshot.epoch,
                stillOwner: { self.lease?.held == true })
        } catch {
            count(.snapshotsFailed)
            log("snapshot after seq \(seq) not stored (\(error)): skipped")
            return
        }
        count(.snapshotsStored)
        var purged = "older messages purged"
        do {
            guard lease?.held == true else { throw Stopped() }
            try js.purge(Names.stream, subject: subject, before: seq + 1)
        } catch {
            purged = "older messages not purged (\(error))"
        }
        log(
            "snapshot after seq \(seq) (\(snapshot.events) events, \(head.raw / 1024) KiB, \(head.size / 1024) KiB compressed, \(head.chunks.count) chunks) stored, \(purged), in \((monotonicNanos() - started) / 1_000_000) ms"
        )
    }
}

/// Snapshots in the stream ``Names/snapshotStream``.
struct NatsSnapshotBackend: SnapshotBackend {
    let js: JetStream
    let connection: NatsConnection
    let timeout: Duration

    func append(subject: String, headers: [String: String], data: [UInt8]) throws -> UInt64 {
        try js.publish(NatsMessage(subject: subject, headers: headers, data: data), timeout: timeout.milliseconds)
            .sequence
    }

    func last(subject: String) throws -> StoredMessage? {
        guard let message = try js.lastMessage(Names.snapshotStream, subject: subject) else { return nil }
        return StoredMessage(
            sequence: message.streamSequence, subject: message.subject, headers: message.headers, data: message.data)
    }

    func message(_ sequence: UInt64) throws -> StoredMessage? {
        guard let message = try js.message(Names.snapshotStream, sequence: sequence) else { return nil }
        return StoredMessage(
            sequence: message.streamSequence, subject: message.subject, headers: message.headers, data: message.data)
    }

    func purge(subject: String, before sequence: UInt64) throws {
        try js.purge(Names.snapshotStream, subject: subject, before: sequence)
    }

    var maxPayload: Int { max(4096 + 1024, connection.maxPayload) }
}
