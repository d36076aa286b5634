import NatsClient
import Testing
@testable import TypingCluster
import TypingTestSupport

/// A router's hold on its name through an outage: a renewal that timed out on
/// the client after the server stored it leaves the key at another revision, but
/// with this router's own value: the name is still its own (before, the router
/// took that for another router and stopped, exit 75, leaving its input unread).
@Suite(.serialized) struct NameFenceTests {
    @Test func aRenewalStoredButUnansweredKeepsTheName() throws {
        let server = try LiveTests.server()
        defer { server.stop() }
        let kv = try LiveTests.bucket(Names.routerNameBucket, on: server)
        let fence = try NameFence.take(kv, name: "r", ttl: 15)
        let first = fence.revision
        // The server stored a renewal whose reply never came: same value, newer revision.
        let landed = try kv.update("r", fence.value, last: first)
        guard case .renewed(let revision) = try fence.renew(last: first) else {
            Issue.record("a renewal of its own value was taken for another router's")
            return
        }
        #expect(revision > landed)
        // The key lapsed (an outage longer than the TTL): taken again.
        try kv.delete("r")
        guard case .renewed = try fence.renew(last: revision) else {
            Issue.record("a lapsed name was not taken again")
            return
        }
        // Another router's value: taken.
        _ = try kv.put("r", Array(#"{"host":"elsewhere","pid":7,"started":1}"#.utf8))
        #expect(try fence.renew(last: revision) == .taken("pid 7 on elsewhere"))
    }
}
