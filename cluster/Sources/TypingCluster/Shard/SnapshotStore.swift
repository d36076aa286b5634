import CZlib
import Foundation

/// A message stored in a stream: its sequence, headers and body.
public struct StoredMessage: Sendable {
    public var sequence: UInt64
    public var subject: String
    public var headers: [String: String]
    public var data: [UInt8]

    public init(sequence: UInt64, subject: String, headers: [String: String] = [:], data: [UInt8]) {
        self.sequence = sequence
        self.subject = subject
        self.headers = headers
        self.data = data
    }
}

/// Where snapshots are stored: a stream (``Names/snapshotStream``), or a fake for tests.
public protocol SnapshotBackend {
    /// Stores `data` on `subject`; its sequence.
    func append(subject: String, headers: [String: String], data: [UInt8]) throws -> UInt64
    /// The last message on `subject`, nil when there is none.
    func last(subject: String) throws -> StoredMessage?
    /// The message at `sequence`, nil when there is none.
    func message(_ sequence: UInt64) throws -> StoredMessage?
    /// Deletes the messages on `subject` before `sequence`.
    func purge(subject: String, before sequence: UInt64) throws
    /// The largest body the servers take.
    var maxPayload: Int { get }
}

/// A partition's snapshots in chunks (nats.c has no object store): the body,
/// deflated, in chunks of at most the servers' max payload less
/// ``SnapshotStore/headroom`` on ``Names/snapshotChunkSubject(_:)``, then a head on
/// ``Names/snapshotHeadSubject(_:)`` naming them: the chunks' sequences, the
/// deflated and inflated sizes, a CRC-32 of the deflated bytes, the command
/// stream's sequence the snapshot covers and when that stream was made (a
/// snapshot of an older stream of the same name is not believed). Restoring reads
/// the last head and its chunks, and checks all of it. Older chunks and heads are
/// purged once a newer head is stored.
public struct SnapshotStore {
    /// Bytes left in each chunk's message for its headers.
    public static let headroom = 4096

    /// What a head says.
    public struct Head: Sendable, Equatable {
        /// The last command stream sequence the snapshot covers.
        public var seq: UInt64
        /// When the command stream was made (ns since 1970): 0 when unknown.
        public var streamCreated: Int64
        public var epoch: UInt64
        /// The chunks' sequences, in order.
        public var chunks: [UInt64]
        /// Deflated size, inflated size, CRC-32 of the deflated bytes.
        public var size: Int
        public var raw: Int
        public var crc: UInt32

        var json: [UInt8] {
            Array(
                "{\"seq\":\(seq),\"stream_created\":\(streamCreated),\"epoch\":\(epoch),\"size\":\(size),\"raw\":\(raw),\"crc\":\(crc),\"chunks\":[\(chunks.map(String.init).joined(separator: ","))]}"
                    .utf8)
        }

        init(seq: UInt64, streamCreated: Int64, epoch: UInt64, chunks: [UInt64], size: Int, raw: Int, crc: UInt32) {
            self.seq = seq
            self.streamCreated = streamCreated
            self.epoch = epoch
            self.chunks = chunks
            self.size = size
            self.raw = raw
            self.crc = crc
        }

        init?(json bytes: [UInt8]) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                let seq = (object["seq"] as? NSNumber)?.uint64Value,
                let created = (object["stream_created"] as? NSNumber)?.int64Value,
                let epoch = (object["epoch"] as? NSNumber)?.uint64Value,
                let size = (object["size"] as? NSNumber)?.intValue,
                let raw = (object["raw"] as? NSNumber)?.intValue,
                let crc = (object["crc"] as? NSNumber)?.uint32Value,
                let chunks = object["chunks"] as? [NSNumber]
            else { return nil }
            self.init(
                seq: seq, streamCreated: created, epoch: epoch, chunks: chunks.map(\.uint64Value),
                size: size, raw: raw, crc: crc)
        }
    }

    /// Why a snapshot could not be restored.
    public struct Broken: Error, CustomStringConvertible {
        public let description: String
    }

    public let backend: SnapshotBackend
    public let partition: Int

    public init(backend: SnapshotBackend, partition: Int) {
        self.backend = backend
        self.partition = partition
    }

    /// Stores `body` as the snapshot covering command sequence `seq`; then purges
    /// older chunks and heads (unless `purge` is false). Returns the head.
    @discardableResult
    public func save(
        _ body: [UInt8], seq: UInt64, streamCreated: Int64, epoch: UInt64, purge: Bool = true,
        stillOwner: () -> Bool = { true }
    ) throws -> Head {
        let deflated = Admission.deflate(body, level: 1)
        let crc = Self.crc32(deflated)
        let chunkSize = max(1024, backend.maxPayload - Self.headroom)
        var chunks: [UInt64] = []
        chunks.reserveCapacity(deflated.count / chunkSize + 1)
        var start = 0
        let chunkSubject = Names.snapshotChunkSubject(partition)
        repeat {
            let end = min(deflated.count, start + chunkSize)
            guard stillOwner() else { throw Broken(description: "the lease was lost while storing") }
            chunks.append(try backend.append(subject: chunkSubject, headers: [:], data: Array(deflated[start..<end])))
            start = end
        } while start < deflated.count
        let head = Head(
            seq: seq, streamCreated: streamCreated, epoch: epoch, chunks: chunks, size: deflated.count,
            raw: body.count, crc: crc)
        guard stillOwner() else { throw Broken(description: "the lease was lost while storing") }
        let headSeq = try backend.append(subject: Names.snapshotHeadSubject(partition), headers: [:], data: head.json)
        // (A purge before sequence 1 would purge the whole subject on nats-server
        // 2.9: there is nothing before it anyway.)
        if purge, let first = chunks.first, first > 1 {
            try backend.purge(subject: chunkSubject, before: first)
        }
        if purge && headSeq > 1 {
            try backend.purge(subject: Names.snapshotHeadSubject(partition), before: headSeq)
        }
        return head
    }

    /// The last snapshot: its head and body; nil when there is none (or only one
    /// of another stream than `streamCreated`, when that is not 0).
    public func load(streamCreated: Int64) throws -> (head: Head, body: [UInt8])? {
        guard let message = try backend.last(subject: Names.snapshotHeadSubject(partition)) else { return nil }
        guard let head = Head(json: message.data) else {
            throw Broken(description: "the head at seq \(message.sequence) does not read")
        }
        if streamCreated != 0 && head.streamCreated != 0 && head.streamCreated != streamCreated { return nil }
        guard head.size >= 0, head.raw >= 0 else { throw Broken(description: "a head with negative sizes") }
        var deflated: [UInt8] = []
        deflated.reserveCapacity(head.size)
        let chunkSubject = Names.snapshotChunkSubject(partition)
        for seq in head.chunks {
            guard let chunk = try backend.message(seq) else {
                throw Broken(description: "chunk \(seq) of the snapshot after seq \(head.seq) is missing")
            }
            guard chunk.subject == chunkSubject else {
                throw Broken(description: "message \(seq) is on \(chunk.subject), not \(chunkSubject)")
            }
            deflated += chunk.data
            if deflated.count > head.size { break }
        }
        guard deflated.count == head.size else {
            throw Broken(
                description:
                    "the snapshot after seq \(head.seq) has \(deflated.count) bytes, its head says \(head.size)")
        }
        guard Self.crc32(deflated) == head.crc else {
            throw Broken(description: "the snapshot after seq \(head.seq) does not match its checksum")
        }
        let body: [UInt8]
        do {
            body = try Admission.inflate(deflated, limit: head.raw)
        } catch {
            throw Broken(description: "the snapshot after seq \(head.seq): \(error)")
        }
        guard body.count == head.raw else {
            throw Broken(
                description:
                    "the snapshot after seq \(head.seq) inflates to \(body.count) bytes, its head says \(head.raw)")
        }
        return (head, body)
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { pointer in
            var crc = CZlib.crc32(0, nil, 0)
            var offset = 0
            while offset < pointer.count {
                let count = min(pointer.count - offset, 1 << 30)
                crc = CZlib.crc32(crc, pointer.baseAddress.map { $0 + offset }, uInt(count))
                offset += count
            }
            return UInt32(truncatingIfNeeded: crc)
        }
    }
}
