import Foundation
import NatsClient
import TypingPartitioning
import TypingProtocol
import Synchronization
import Testing
@testable import TypingCluster
import TypingTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real nats-server (JetStream, one node) started by pid for the test and
/// stopped by it: `ctl setup` and `ctl idle`, and the gateway's resync. Skipped,
/// saying why, when nats-server is not installed (TypingTestSupport's `require`);
/// failing then under CI=true.
@Suite(.serialized) struct LiveTests {
    static let serverPath: String? = {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") where access("\(directory)/nats-server", X_OK) == 0 {
            return "\(directory)/nats-server"
        }
        return nil
    }()

    /// The path of nats-server; the test is skipped, saying why, when it is not on
    /// PATH (it fails under CI=true).
    static func requireServerPath(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try require(
            serverPath, "nats-server is not on PATH (apt-get install nats-server): the live tests cannot run",
            sourceLocation: sourceLocation)
    }

    /// A server for one test (see ``requireServerPath(sourceLocation:)``).
    static func server(sourceLocation: SourceLocation = #_sourceLocation) throws -> NatsServer {
        try NatsServer(path: requireServerPath(sourceLocation: sourceLocation))
    }

    /// Bucket `name` of a fresh setup (LiveTests.settings) on `server`.
    static func bucket(_ name: String, on server: NatsServer) throws -> KeyValue {
        let js = try JetStream(NatsConnection(.init(servers: [server.url], name: "test")))
        try ClusterControl(js).setup(settings(), timeout: 30)
        return try KeyValue.open(name, in: js)
    }

    static func settings() -> ClusterSettings {
        var settings = ClusterSettings()
        settings.replicas = 1
        settings.partitions = 2
        return settings
    }

    @Test func setupMakesWhatIsMissingAndWipeEmptiesIt() throws {
        let server = try Self.server()
        defer { server.stop() }
        let connection = try NatsConnection(.init(servers: [server.url], name: "test"))
        let js = try JetStream(connection)
        let control = ClusterControl(js)
        try control.setup(Self.settings(), timeout: 30)
        _ = try js.publish(NatsMessage(subject: Names.commandSubject(0), data: Array("{}".utf8)))
        #expect(try js.streamInfo(Names.stream).messages == 1)
        try control.setup(Self.settings(), timeout: 30)
        #expect(try js.streamInfo(Names.stream).messages == 1, "setup keeps what exists")
        try control.wipe(Self.settings(), force: false, timeout: 30)
        #expect(try js.streamInfo(Names.stream).messages == 0)
        for name in [
            Names.snapshotStream, "KV_" + Names.leaseBucket, "KV_" + Names.routerBucket, "KV_" + Names.routerNameBucket
        ] {
            #expect(throws: Never.self) { _ = try js.streamInfo(name) }
        }
        // The name bucket forgets a name after its TTL (the routers' fence): a
        // create of a live key fails, the same create is refused no more once it expired.
        let names = try KeyValue.open(Names.routerNameBucket, in: js)
        _ = try names.create("r", [1])
        #expect(throws: NatsError.self) { _ = try names.create("r", [1]) }
    }

    @Test func setupSaysWhenTheServerHasNoJetStream() throws {
        let path = try Self.requireServerPath()
        let server = try NatsServer(path: path, jetStream: false)
        defer { server.stop() }
        let connection = try NatsConnection(.init(servers: [server.url], name: "test"))
        let control = ClusterControl(try JetStream(connection))
        #expect { try control.setup(Self.settings(), timeout: 30) } throws: { error in
            (error as? ClusterControl.Failure)?.description.contains("has no JetStream") == true
        }
    }

    /// Fake owners answering typingd.stats: partition → (applied_seq, stream_last_seq).
    final class Owners: Sendable {
        let rows: Locked<[Int: (Int, Int)]>
        let subscription: Subscription
        init(_ connection: NatsConnection, _ rows: [Int: (Int, Int)]) throws {
            let table = Locked(rows)
            self.rows = table
            subscription = try connection.subscribe(Names.statsSubject) { message in
                guard let reply = message.reply else { return }
                for (p, (applied, last)) in table.value.withLock({ $0 }) {
                    let body =
                        "{\"partition\":\(p),\"role\":\"owner\",\"epoch\":1,\"applied_seq\":\(applied),\"stream_last_seq\":\(last)}"
                    try? connection.publish(reply, Array(body.utf8))
                }
            }
            try connection.flush(timeout: 5000) // the server has the subscription before anyone asks
        }
    }

    @Test func idleWaitsForEveryOwnerToReachTheStreamsLastMessage() throws {
        let server = try Self.server()
        defer { server.stop() }
        let connection = try NatsConnection(.init(servers: [server.url], name: "test"))
        let js = try JetStream(connection)
        let control = ClusterControl(js)
        try control.setup(Self.settings(), timeout: 30)
        for p in 0..<2 {
            try js.addConsumer(Names.stream, .init(durable: Names.consumer(p), filterSubject: Names.commandSubject(p)))
        }
        // No owner at all.
        #expect { _ = try control.idle(partitions: 2, timeout: 1) } throws: { error in
            "\(error)".contains("partition 0: no owner answered")
        }
        // Partition 1's owner is behind the stream: not idle, and said so.
        let owners = try Owners(connection, [0: (5, 5), 1: (3, 5)])
        #expect { _ = try control.idle(partitions: 2, timeout: 2) } throws: { error in
            "\(error)".contains("partitions [1] still busy") && "\(error)".contains("partition 1: applied 3 of 5")
        }
        owners.rows.value.withLock { $0[1] = (5, 5) }
        let text = try control.idle(partitions: 2, timeout: 20)
        #expect(text == "idle: partition 0: applied through seq 5; partition 1: applied through seq 5")
        _ = owners
    }

    /// A fake shard's resync service: answers `typingd.resync` for the partitions
    /// it is told to, with the answer it is given.
    final class ResyncService: Sendable {
        let answers: Locked<[Int: String]>
        let subscription: Subscription
        init(_ connection: NatsConnection) throws {
            let answers = Locked<[Int: String]>([:])
            self.answers = answers
            subscription = try connection.subscribe(Names.resyncSubject) { message in
                guard let reply = message.reply else { return }
                for (_, body) in answers.value.withLock({ $0 }) { try? connection.publish(reply, Array(body.utf8)) }
            }
            try connection.flush(timeout: 5000) // the server has the subscription before anyone asks
        }
    }

    @Test func theGatewayResyncsOnANewEpochAndAsksAgainWhoDidNotAnswer() throws {
        let server = try Self.server()
        defer { server.stop() }
        let connection = try NatsConnection(.init(servers: [server.url], name: "shard"))
        let service = try ResyncService(connection)
        let line = { (typing: String) in
            "{\"event\":\"indicator\",\"at\":1,\"conv\":\"g\",\"viewer\":\"bob\",\"typing\":[\(typing)],\"text\":\"\"}"
        }
        let updates = Mutex<[GatewayUpdate]>([])
        var configuration = Gateway.Configuration(servers: [server.url], viewers: ["bob"])
        configuration.partitions = 2
        let gateway = try Gateway(configuration, onUpdate: { update in updates.withLock { $0.append(update) } })
        defer { gateway.close() }
        let subject = Names.viewerSubject(Names.viewerBucket("bob", among: configuration.viewerBuckets))
        func publish(_ body: String, epoch: Int, seq: Int, p: Int = Partitioned.g) throws {
            try connection.publish(
                NatsMessage(
                    subject: subject,
                    headers: [
                        Names.Header.epoch: "\(epoch)", Names.Header.partition: "\(p)",
                        Names.Header.sequence: "\(seq)"
                    ], data: Array(body.utf8)))
        }
        try publish(line("\"ann\""), epoch: 1, seq: 5)
        #expect(eventually { updates.withLock { $0.count } == 1 })
        // A new epoch: a resync, which only partition g's owner answers at first;
        // the other is asked again until it answers.
        service.answers.value.withLock {
            $0[Partitioned.g] =
                "{\"partition\":\(Partitioned.g),\"epoch\":2,\"seq\":7,\"viewer_buckets\":16,\"indicators\":[\(line("\"zed\""))]}"
        }
        try publish(line("\"cy\""), epoch: 2, seq: 6)
        #expect(eventually { gateway.counts.resyncRetries >= 1 })
        #expect(gateway.core.state.withLock { $0.resyncing })
        let other = 1 - Partitioned.g
        service.answers.value.withLock {
            $0[other] = "{\"partition\":\(other),\"epoch\":1,\"seq\":1,\"indicators\":[]}"
        }
        #expect(eventually { !gateway.core.state.withLock { $0.resyncing || $0.wanted } })
        #expect(gateway.counts.newEpochs == 1)
        #expect(
            gateway.core.state.withLock { $0.state.current("bob", Screen(conv: "g")) }.map {
                String(decoding: $0, as: UTF8.self)
            } == line("\"zed\""))
        // A message the answer covers (seq 7 at epoch 2) is dropped; a later one applies.
        try publish(line("\"old\""), epoch: 2, seq: 7)
        try publish(line(""), epoch: 2, seq: 8)
        let finals = gateway.finish(drain: .seconds(20))
        #expect(gateway.counts.covered == 1)
        #expect(finals.count == 1 && finals.first?.indicator == nil)
        #expect(updates.withLock { $0.filter { $0.source == .message }.compactMap(\.line).count } == 3)
    }

    /// finish() reads what the server sent and what is queued before the finals:
    /// a busy gateway (20 ms a message) still ends on the last message published.
    @Test func theFinalsComeAfterWhatIsQueued() throws {
        let server = try Self.server()
        defer { server.stop() }
        let connection = try NatsConnection(.init(servers: [server.url], name: "shard"))
        var configuration = Gateway.Configuration(servers: [server.url], viewers: ["bob"])
        configuration.partitions = 1
        configuration.slow = .milliseconds(20)
        let gateway = try Gateway(configuration, onUpdate: { _ in })
        defer { gateway.close() }
        let subject = Names.viewerSubject(Names.viewerBucket("bob", among: configuration.viewerBuckets))
        for seq in 1...30 {
            let body =
                "{\"event\":\"indicator\",\"at\":1,\"conv\":\"g\",\"viewer\":\"bob\",\"typing\":[\"u\(seq)\"],\"text\":\"\"}"
            try connection.publish(
                NatsMessage(
                    subject: subject,
                    headers: [
                        Names.Header.epoch: "1", Names.Header.partition: "0",
                        Names.Header.sequence: "\(seq)"
                    ], data: Array(body.utf8)))
        }
        try connection.flush(timeout: 5000)
        let finals = gateway.finish(drain: .seconds(30))
        let last = finals.first.flatMap { $0.indicator }.flatMap { JSONValue.parse($0)?["typing"]?.array }
        #expect(last == [.string("u30")])
        #expect(gateway.counts.messages == 30)
    }

    /// A fetch whose deliveries jump (a delivery lost) publishes what it applied
    /// so far, fills the gap from the stream, then goes on: every event in the
    /// audit belongs to a record with its E line, each record's events before it.
    @Test func aFetchCutByALostDeliveryAuditsEveryRecordWhole() throws {
        let server = try Self.server()
        defer { server.stop() }
        let connection = try NatsConnection(.init(servers: [server.url], name: "test"))
        let js = try JetStream(connection)
        _ = try ClusterControl(js).setup(Self.settings(), timeout: 30)
        let subject = Names.commandSubject(0)
        var stored: [NatsMessage] = []
        for seq in 1...5 {
            let ack = try js.publish(
                NatsMessage(subject: subject, data: Array("{\"cmd\":\"stats\",\"id\":\"s\(seq)\"}\n".utf8)))
            var message = NatsMessage(subject: subject, data: Array("{\"cmd\":\"stats\",\"id\":\"s\(seq)\"}\n".utf8))
            message.streamSequence = ack.sequence
            message.consumerSequence = ack.sequence
            stored.append(message)
        }
        var template = Array("/tmp/typingd-audit-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        #expect(fd >= 0)
        close(fd)
        let auditPath = String(cString: template)
        defer { unlink(auditPath) }
        var config = Shard.Configuration(
            servers: [server.url], partition: 0, buckets: 4, session: SessionConfiguration(drain: false))
        config.auditPath = auditPath
        config.replicas = 1
        config.tick = .zero
        let shard = try Shard(config: config)
        guard let lease = try shard.bindLease() else { Issue.record("no lease bucket"); return }
        shard.lease = lease
        try shard.acquire(lease)
        defer { lease.release() }
        shard.rules = ConsumeState(
            written: 0, published: 0, catchUpTarget: 0, snapshotEvery: 0, now: .now, caughtUp: true)
        // Delivered: 1, 2, then 4 (3's delivery lost), 5.
        try shard.applyFetch([stored[0], stored[1], stored[3], stored[4]])
        #expect(shard.written == 5)
        // Each event line is followed, before any other record's line, by its E line.
        let lines = (NatsServer.read(auditPath) ?? "").split(separator: "\n").map {
            $0.split(separator: "\t", maxSplits: 2).map(String.init)
        }
        var open: [String] = []
        var records: [(String, [String])] = []
        for fields in lines where fields.count == 3 {
            if fields[1] == "E" {
                records.append((fields[0] + " " + fields[2].split(separator: ":")[0], open.filter { $0 != fields[0] }))
                open = []
            } else {
                open.append(fields[0])
            }
        }
        #expect(open.isEmpty, "events without their record's E line: \(open)")
        #expect(records.map(\.0) == ["2 1", "3 3", "5 4"])
        #expect(records.allSatisfy { $0.1.isEmpty }, "events under another record's sequence: \(records)")
        let events = lines.filter { $0.count == 3 && $0[1] == "P" }.count
        #expect(events == 5)
    }

    /// A shard run on a thread of its own, until stopped.
    final class Running: Sendable {
        /// What the test reads of it (the shard itself belongs to its thread).
        let shared: ShardShared
        /// What run() returned, once it has.
        let status = Locked<Int32?>(nil)

        init(_ config: Shard.Configuration) throws {
            let shard = try Shard(config: config)
            shared = shard.shared
            let status = self.status
            // Handed to its thread: nothing here touches it after.
            let owned = Mutex<Shard?>(shard)
            Thread.detachNewThread {
                let result = owned.withLock { $0?.run() }
                status.value.withLock { $0 = result }
            }
        }

        /// Stops it and waits (up to 30 s) until it has released its lease.
        func stop() -> Bool {
            shared.stop()
            return eventually(timeout: 30) { status.value.withLock { $0 } != nil }
        }
    }

    /// Announcements are timed like timeouts: a new owner that rebuilds from a
    /// snapshot makes the announcements pending in it at their time (not the
    /// snapshot's time plus the delay), on its own ticks, for a member's main
    /// screen and side pane alike (both at one thread), and does not announce
    /// again what the first owner announced; its resync table lists both screens.
    @Test func aNewOwnerAnnouncesWhatTheSnapshotHadPendingOnItsTicks() throws {
        let server = try Self.server()
        defer { server.stop() }
        let connection = try NatsConnection(.init(servers: [server.url], name: "test"))
        let js = try JetStream(connection)
        try ClusterControl(js).setup(Self.settings(), timeout: 30)
        let updates = Mutex<[GatewayUpdate]>([])
        var gatewayConfiguration = Gateway.Configuration(servers: [server.url], viewers: ["bo", "cy"])
        gatewayConfiguration.partitions = 2
        let gateway = try Gateway(gatewayConfiguration, onUpdate: { update in updates.withLock { $0.append(update) } })
        defer { gateway.close() }
        func announced(_ viewer: String) -> [JSONValue] {
            updates.withLock {
                $0.filter { $0.kind == .announce && $0.viewer == viewer }.compactMap {
                    $0.line.flatMap { JSONValue.parse($0) }
                }
            }
        }

        // Cy reads the channel, where Dee types; bo follows thread t in the
        // channel and in his side pane, where Ana types a second later. At 1.6 s
        // (a stamped tick) cy's sentence has been announced, bo's not yet.
        let now = wallMilliseconds()
        let commands = [
            #"{"cmd":"join","conv":"g","user":"ana","name":"Ana","at":\#(now)}"#,
            #"{"cmd":"join","conv":"g","user":"bo","name":"Bo","at":\#(now)}"#,
            #"{"cmd":"join","conv":"g","user":"cy","name":"Cy","at":\#(now)}"#,
            #"{"cmd":"join","conv":"g","user":"dee","name":"Dee","at":\#(now)}"#,
            #"{"cmd":"open","conv":"g","user":"bo","thread":"t","at":\#(now)}"#,
            #"{"cmd":"open","conv":"g","user":"bo","thread":"t","pane":"side","at":\#(now)}"#,
            #"{"cmd":"type","conv":"g","user":"dee","timeout_ms":60000,"at":\#(now)}"#,
            #"{"cmd":"type","conv":"g","user":"ana","thread":"t","timeout_ms":60000,"at":\#(now + 1000)}"#
        ]
        let subject = Names.commandSubject(Partitioned.g)
        _ = try js.publish(NatsMessage(subject: subject, data: Array((commands.joined(separator: "\n") + "\n").utf8)))
        _ = try js.publish(NatsMessage(subject: subject, data: Array(#"{"cmd":"tick","at":\#(now + 1600)}"#.utf8)))

        var session = SessionConfiguration(drain: false)
        session.engine.announceAfter = 1500
        var config = Shard.Configuration(
            servers: [server.url], partition: Partitioned.g, buckets: gatewayConfiguration.viewerBuckets,
            session: session)
        config.partitions = Self.settings().partitions
        config.replicas = 1
        config.snapshotEvery = 1
        config.leaseTTL = .seconds(5)
        config.tick = .zero // the first owner's clock moves only with the stamped commands
        let first = try Running(config)
        // Both messages are stored before it starts: it catches up on them, then
        // stores a snapshot after the tick.
        #expect(
            eventually(timeout: 30) { first.shared.state.withLock { $0.counts[.snapshotsStored] } >= 1 },
            "a snapshot after the tick")
        #expect(eventually(timeout: 30) { announced("cy").count == 1 })
        #expect(first.stop())
        #expect(
            updates.withLock { $0.filter { $0.viewer == "bo" && $0.kind == .indicator }.count } == 2,
            "bo's main screen and side pane were shown Ana typing")
        #expect(announced("bo").isEmpty)

        config.tick = .milliseconds(50)
        let second = try Running(config)
        defer { _ = second.stop() }
        #expect(
            eventually(timeout: 30) { announced("bo").count == 2 },
            "\(updates.withLock { $0.map { String(decoding: $0.line ?? [], as: UTF8.self) } })")
        #expect(announced("bo").map { $0["text"]?.string } == ["Ana is typing...", "Ana is typing..."])
        #expect(
            announced("bo").map { $0["at"]?.int } == [now + 2500, now + 2500],
            "made when they were due, not 1.5 s after the snapshot")
        #expect(
            Set(updates.withLock { $0.filter { $0.kind == .announce && $0.viewer == "bo" }.map(\.screen) })
                == [Screen(conv: "g", thread: "t"), Screen(conv: "g", thread: "t", pane: "side")])
        #expect(
            second.shared.state.withLock { $0.shown.of("bo") }.count == 2, "the resync table lists both of bo's screens"
        )
        // Past the time a rebuild without the snapshot's announcement keys would
        // have announced cy's sentence again (1.5 s after the snapshot's 1.6 s).
        #expect(eventually(timeout: 30) { second.shared.clock.load(ordering: .relaxed) > now + 3200 })
        #expect(announced("cy").count == 1, "cy's sentence was announced by the first owner, once")
        #expect(second.shared.state.withLock { $0.counts[.ticks] } > 0)
    }

    @Test func theGatewayStopsOnAViewerBucketsMismatch() throws {
        let server = try Self.server()
        defer { server.stop() }
        let connection = try NatsConnection(.init(servers: [server.url], name: "shard"))
        let service = try ResyncService(connection)
        service.answers.value.withLock {
            $0[0] = "{\"partition\":0,\"epoch\":1,\"seq\":1,\"viewer_buckets\":8,\"indicators\":[]}"
        }
        let said = Mutex<String?>(nil)
        var configuration = Gateway.Configuration(servers: [server.url], viewers: ["bob"])
        configuration.partitions = 1
        let gateway = try Gateway(
            configuration, onUpdate: { _ in }, onMismatch: { text in said.withLock { $0 = text } })
        defer { gateway.close() }
        gateway.resync(patience: 0)
        #expect(eventually { said.withLock { $0 } != nil })
        #expect(gateway.mismatch?.contains("8 viewer buckets") == true)
    }
}

/// A value behind a lock, that closures can share.
final class Locked<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
}

/// The partition of conversation "g" among 2.
enum Partitioned {
    static let g = TypingPartitioning.Partition.of("g", among: 2)
}

/// One nats-server, started by pid on a port of its choosing, its store in a
/// temporary folder; stopped (TERM, then KILL) by that pid.
final class NatsServer: Sendable {
    let pid: pid_t
    let url: String
    let folder: String

    init(path: String, jetStream: Bool = true) throws {
        var template = Array("/tmp/typingd-live-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ClusterControl.Failure("mkdtemp failed") }
        folder = String(cString: made)
        let log = folder + "/server.log"
        var arguments = [path, "-a", "127.0.0.1", "-p", "-1", "-l", log]
        if jetStream { arguments += ["-js", "-sd", folder + "/store"] }
        var child: pid_t = 0
        let cArguments = arguments.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let status = posix_spawn(&child, path, nil, nil, cArguments, environ)
        guard status == 0 else { throw ClusterControl.Failure("posix_spawn nats-server: \(status)") }
        pid = child
        // Its port, from its log: "Listening for client connections on 127.0.0.1:PORT".
        var found: String? = nil
        _ = eventually(timeout: 20) {
            if let text = NatsServer.read(log), let range = text.firstRange(of: "Listening for client connections on ")
            {
                let rest = text[range.upperBound...].prefix { $0 != "\n" }
                if let colon = rest.lastIndex(of: ":") { found = String(rest[rest.index(after: colon)...]) }
            }
            return found != nil
        }
        guard let port = found else {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
            throw ClusterControl.Failure("nats-server did not listen within 20 s; see \(log)")
        }
        url = "nats://127.0.0.1:\(port)"
    }

    static func read(_ path: String) -> String? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func stop() {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        if !eventually(timeout: 5, { waitpid(pid, &status, WNOHANG) != 0 }) {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
        }
        // The store is this test's own folder.
        let command = ["/bin/rm", "-rf", folder]
        let cArguments = command.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var child: pid_t = 0
        if posix_spawn(&child, "/bin/rm", nil, nil, cArguments, environ) == 0 { waitpid(child, &status, 0) }
    }
}
