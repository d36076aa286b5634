import NatsClient
import Testing
@testable import TypingCluster
import TypingTestSupport

/// The one rule of a held key (a shard's lease, a router's name), through an
/// outage: a renewal the server stored while its reply was lost leaves the key at
/// another revision with the holder's own value, and it is still the holder's.
@Suite(.serialized) struct KeyHoldTests {
    @Test func aLeaseRenewalStoredButUnansweredKeepsTheLease() throws {
        let server = try LiveTests.server()
        defer { server.stop() }
        let kv = try LiveTests.bucket(Names.leaseBucket, on: server)
        let lease = Lease(kv: kv, partition: 0, ttl: 15, log: { _ in })
        #expect(try lease.tryCreate())
        let epoch = lease.epoch
        // The server stored a renewal whose reply never came: same value, newer revision.
        let landed = try kv.update(lease.key, lease.value, last: epoch)
        guard case .renewed(let revision) = try lease.renew() else {
            Issue.record("a renewal of its own value was taken for another owner's")
            return
        }
        #expect(revision > landed)
        #expect(lease.epoch == epoch, "a renewal changed the owner's epoch")
        // Renewed at the revision it has now, kept for the next renewal (a plain update).
        #expect(lease.revision.load(ordering: .acquiring) == revision)
        let again = try lease.renew()
        guard case .renewed(let next) = again, next == revision + 1 else {
            Issue.record("the renewal after did not update from the revision kept: \(again)")
            return
        }
        // Another owner's value: taken, and who.
        let other = Array(#"{"owner":"elsewhere","partition":0}"#.utf8)
        let theirs = try kv.put(lease.key, other)
        #expect(try lease.renew() == .taken(value: other, revision: theirs))
        // Gone (lapsed): a lease is not taken again by its renewal.
        try kv.delete(lease.key)
        #expect(try lease.renew() == .lapsed)
        #expect(try kv.get(lease.key) == nil, "a lapsed lease was written again by a renewal")
    }
}
