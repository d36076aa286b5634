import Foundation
import NatsClient
import Synchronization
import TypingCore
@_spi(Daemon) import TypingProtocol

extension Shard {
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
