import Testing
@testable import TypingCluster

/// A stream in memory: sequences shared by every subject, purges by subject.
final class FakeSnapshotBackend: SnapshotBackend {
    var messages: [UInt64: StoredMessage] = [:]
    var next: UInt64 = 1
    let maxPayload: Int

    init(maxPayload: Int) {
        self.maxPayload = maxPayload
    }

    func append(subject: String, headers: [String: String], data: [UInt8]) throws -> UInt64 {
        #expect(data.count <= maxPayload, "a message larger than the max payload")
        let seq = next
        next += 1
        messages[seq] = StoredMessage(sequence: seq, subject: subject, headers: headers, data: data)
        return seq
    }

    func last(subject: String) throws -> StoredMessage? {
        messages.values.filter { $0.subject == subject }.max { $0.sequence < $1.sequence }
    }

    func message(_ sequence: UInt64) throws -> StoredMessage? { messages[sequence] }

    func purge(subject: String, before sequence: UInt64) throws {
        for (seq, message) in messages where message.subject == subject && seq < sequence { messages[seq] = nil }
    }
}

@Suite("SnapshotStore: snapshots in chunks")
struct SnapshotStoreTests {
    /// Bytes that do not deflate much: a state many times the max payload once deflated.
    static func noise(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBufferPointer { buffer in
            for index in buffer.indices {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                buffer[index] = UInt8(truncatingIfNeeded: state >> 56)
            }
        }
        return bytes
    }

    @Test("a snapshot many times the max payload restores byte for byte; older ones are purged")
    func chunksRestore() throws {
        let backend = FakeSnapshotBackend(maxPayload: 64 * 1024)
        let store = SnapshotStore(backend: backend, partition: 2)
        let first = Self.noise(300_000, seed: 1)
        try store.save(first, seq: 10, streamCreated: 77, epoch: 3)
        let body = Self.noise(3_000_000, seed: 2) + Array(repeating: 0x41, count: 1_000_000)
        let head = try store.save(body, seq: 20, streamCreated: 77, epoch: 3)
        #expect(head.chunks.count > 40, "the snapshot spans many messages")
        let loaded = try #require(try store.load(streamCreated: 77))
        #expect(loaded.head == head)
        #expect(loaded.body == body)
        // The first snapshot's chunks and head are gone.
        #expect(backend.messages.count == head.chunks.count + 1)
        // Another partition's snapshot does not mix in.
        let other = SnapshotStore(backend: backend, partition: 3)
        try other.save(Array("other".utf8), seq: 5, streamCreated: 77, epoch: 1)
        #expect(try store.load(streamCreated: 77)?.body == body)
        #expect(try other.load(streamCreated: 77)?.body == Array("other".utf8))
    }

    @Test("no snapshot, or one of an older stream of the same name: none")
    func none() throws {
        let backend = FakeSnapshotBackend(maxPayload: 8 * 1024)
        let store = SnapshotStore(backend: backend, partition: 0)
        #expect(try store.load(streamCreated: 1) == nil)
        try store.save(Array("state".utf8), seq: 4, streamCreated: 1, epoch: 1)
        #expect(try store.load(streamCreated: 2) == nil)
        #expect(try store.load(streamCreated: 1)?.head.seq == 4)
    }

    @Test("a missing, altered or foreign chunk is refused")
    func broken() throws {
        let backend = FakeSnapshotBackend(maxPayload: 8 * 1024)
        let store = SnapshotStore(backend: backend, partition: 0)
        let head = try store.save(Self.noise(100_000, seed: 3), seq: 4, streamCreated: 1, epoch: 1)
        let middle = head.chunks[head.chunks.count / 2]
        let saved = try #require(backend.messages[middle])
        var altered = saved
        altered.data[10] ^= 1
        backend.messages[middle] = altered
        #expect(throws: SnapshotStore.Broken.self) { try store.load(streamCreated: 1) }
        altered.subject = Names.snapshotChunkSubject(1)
        altered.data = saved.data
        backend.messages[middle] = altered
        #expect(throws: SnapshotStore.Broken.self) { try store.load(streamCreated: 1) }
        backend.messages[middle] = nil
        #expect(throws: SnapshotStore.Broken.self) { try store.load(streamCreated: 1) }
        backend.messages[middle] = saved
        #expect(try store.load(streamCreated: 1) != nil)
        // A head whose checksum does not match its (intact) chunks.
        let headMessage = try #require(try backend.last(subject: Names.snapshotHeadSubject(0)))
        var wrong = head
        wrong.crc &+= 1
        backend.messages[headMessage.sequence]?.data = wrong.json
        #expect(throws: SnapshotStore.Broken.self) { try store.load(streamCreated: 1) }
    }
}
