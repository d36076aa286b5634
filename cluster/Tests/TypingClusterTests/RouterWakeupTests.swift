import Foundation
import NatsClient
import Testing
@testable import TypingCluster
import TypingTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The router's senders, fed lines a few at a time (a paced input): each wakes
/// about once per --linger-ms, not once per block read (every wake-up is a
/// context switch, the router's main cost when lines trickle in).
@Suite(.serialized) struct RouterWakeupTests {
    @Test func sendersWakeOncePerLingerNotOncePerBlock() throws {
        let server = try LiveTests.server()
        defer { server.stop() }
        let connection = try NatsConnection(.init(servers: [server.url], name: "test"))
        try ClusterControl(try JetStream(connection)).setup(LiveTests.settings(), timeout: 30)
        var options = Router.Configuration()
        options.partitions = 2
        options.linger = .milliseconds(200)
        options.replicas = 1
        let router = try Router(configuration: options, connection: connection)
        router.parts = (0..<2).map { Router.Part(index: $0, subject: Names.commandSubject($0), routed: 0, stored: 0) }
        let finished = DispatchGroup()
        for p in 0..<2 {
            finished.enter()
            Thread.detachNewThread {
                router.send([p])
                finished.leave()
            }
        }
        // 200 blocks of a line for each partition, 5 ms apart: 1 s, 5 lingers.
        let lines = Array(
            "{\"cmd\":\"type\",\"conv\":\"a\",\"user\":\"u\"}\n{\"cmd\":\"type\",\"conv\":\"b\",\"user\":\"u\"}\n".utf8)
        var input = RouterInput(maxLineBytes: router.maxLine)
        for _ in 0..<200 {
            _ = try lines.withUnsafeBytes { try router.route($0, input: &input) }
            usleep(5_000)
        }
        router.lock.lock()
        router.readingDone = true
        router.lock.broadcast()
        router.lock.unlock()
        #expect(finished.wait(timeout: .now() + 30) == .success)
        router.lock.lock()
        let wakeups = router.senderWakeups
        let stored = router.parts.map(\.stored)
        router.lock.unlock()
        #expect(stored.reduce(0, +) == 400)
        // About 5 lingers a sender, 2 senders: a few dozen at most, not one per block (400).
        #expect(wakeups <= 60, "the senders woke \(wakeups) times for 200 blocks")
    }
}

/// `route --no-deflate`: the lines are stored as they are, without
/// `Typingd-Encoding`; by default a message of 512 bytes or more is deflated.
@Suite(.serialized) struct RouterDeflateTests {
    @Test(arguments: [true, false]) func messagesAreDeflatedUnlessTurnedOff(deflate: Bool) throws {
        let server = try LiveTests.server()
        defer { server.stop() }
        let connection = try NatsConnection(.init(servers: [server.url], name: "test"))
        let js = try JetStream(connection)
        try ClusterControl(js).setup(LiveTests.settings(), timeout: 30)
        var options = Router.Configuration()
        options.partitions = 1
        options.replicas = 1
        options.deflate = deflate
        let router = try Router(configuration: options, connection: connection)
        router.parts = [Router.Part(index: 0, subject: Names.commandSubject(0), routed: 0, stored: 0)]
        let text = String(repeating: "{\"cmd\":\"type\",\"conv\":\"a\",\"user\":\"u\",\"at\":5}\n", count: 40)
        var input = RouterInput(maxLineBytes: router.maxLine)
        _ = try Array(text.utf8).withUnsafeBytes { try router.route($0, input: &input) }
        router.lock.lock()
        router.readingDone = true
        router.lock.unlock()
        router.send([0])
        let stored = try #require(try js.lastMessage(Names.stream, subject: Names.commandSubject(0)))
        #expect(stored.headers[Names.Header.encoding] == (deflate ? "deflate" : nil))
        let body = deflate ? try Deflate.decompress(stored.data, limit: 1 << 20) : stored.data
        #expect(body == Array(text.utf8))
    }
}
