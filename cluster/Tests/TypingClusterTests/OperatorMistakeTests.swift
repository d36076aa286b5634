import NatsClient
import Testing
import TypingCluster
#if canImport(Glibc)
import Glibc
#endif

/// What an operator may get wrong, refused or told (no server needed): a
/// misspelt setting, a gap in a router's line numbers, another input under a
/// used router name, another partition count than the cluster's.
@Suite struct OperatorMistakeTests {
    func failure(_ text: String) -> String? {
        do {
            _ = try ClusterSettings.load(fileText: text, fileName: "c.conf", environment: [:])
            return nil
        } catch {
            return error.description
        }
    }

    @Test func aMisspeltSettingIsAnErrorWithTheNameMeant() {
        #expect(failure("# eight\nPARTITONS=8\n") == "c.conf:2: no setting \"PARTITONS\": did you mean PARTITIONS?")
        #expect(failure("export lease_ttl=30\n") == "c.conf:1: no setting \"lease_ttl\": did you mean LEASE_TTL?")
        #expect(failure("TICKS=5\n") == "c.conf:1: no setting \"TICKS\": did you mean TICK_MS?")
        #expect(
            failure("COLOUR=blue\n")?.hasPrefix("c.conf:1: no setting \"COLOUR\" (the settings: PORT_BASE, PARTITIONS,")
                == true)
    }

    @Test func aLineThatIsNotASettingIsAnError() {
        #expect(
            failure("PARTITIONS=4\npartitions 8\n")?.hasPrefix("c.conf:2: \"partitions 8\" is not NAME=VALUE") == true)
        #expect(failure("=4\n")?.hasPrefix("c.conf:1: \"=4\" is not NAME=VALUE") == true)
        #expect(failure("\n# only comments\n   \nexport PARTITIONS=2\n") == nil)
    }

    @Test func aGapInARoutersLineNumbersIsTold() throws {
        var admission = Admission()
        let headers = { (first: Int) in [Names.Header.router: "r", Names.Header.lines: String(first)] }
        _ = try admission.admit(headers: headers(1), body: Array("a\nb\n".utf8), limit: 1 << 20)
        #expect(admission.takeGaps().isEmpty)
        // Lines 3..9 never reached the stream: the next message starts at 10.
        let result = try admission.admit(headers: headers(10), body: Array("j\n".utf8), limit: 1 << 20)
        #expect(result.lines == Array("j\n".utf8))
        let gaps = admission.takeGaps()
        #expect(gaps == [Admission.Gap(router: "r", first: 3, last: 9)])
        #expect(gaps.first?.count == 7)
        #expect(gaps.first?.description.hasPrefix("router \"r\": lines 3...9 missing") == true)
        #expect(admission.takeGaps().isEmpty, "each gap is told once")
        // A re-sent message (lines at or below the last applied) is no gap.
        _ = try admission.admit(headers: headers(5), body: Array("e\n".utf8), limit: 1 << 20)
        _ = try admission.admit(headers: headers(11), body: Array("k\n".utf8), limit: 1 << 20)
        #expect(admission.takeGaps().isEmpty)
        // A router first heard of at line 4: lines 1..3 are missing.
        _ = try admission.admit(
            headers: [Names.Header.router: "s", Names.Header.lines: "4"], body: Array("d\n".utf8), limit: 1 << 20)
        #expect(admission.takeGaps() == [Admission.Gap(router: "s", first: 1, last: 3)])
    }

    @Test func anInputIsKnownByItsFirstBytes() {
        let input = Array((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        var head = InputHead()
        // Taken in pieces, out of reach ones ignored.
        input.withUnsafeBytes { bytes in
            head.take(UnsafeRawBufferPointer(rebasing: bytes[100..<200]), at: 100) // past the head: ignored
            head.take(UnsafeRawBufferPointer(rebasing: bytes[0..<50]), at: 0)
            head.take(UnsafeRawBufferPointer(rebasing: bytes[20..<3000]), at: 20)
            head.take(UnsafeRawBufferPointer(rebasing: bytes[3000..<9000]), at: 3000)
        }
        #expect(head.bytes == Array(input[0..<InputHead.limit]))
        let kept = head.identity(before: 1622)
        #expect(kept?.length == 1622)
        let long = head.identity(before: 9000)
        #expect(long?.length == InputHead.limit)
        var same = InputHead(), other = InputHead(), shorter = InputHead()
        input.withUnsafeBytes { same.take(UnsafeRawBufferPointer(rebasing: $0[0..<2000]), at: 0) }
        var changed = input
        changed[1000] ^= 1
        changed.withUnsafeBytes { other.take(UnsafeRawBufferPointer(rebasing: $0[0..<5000]), at: 0) }
        input.withUnsafeBytes { shorter.take(UnsafeRawBufferPointer(rebasing: $0[0..<1000]), at: 0) }
        if let kept, let long {
            #expect(same.matches(kept), "the same input (seen as far as the kept bytes)")
            #expect(!other.matches(kept), "another input")
            #expect(!shorter.matches(kept), "an input shorter than the kept bytes")
            #expect(!same.matches(long), "fewer bytes seen than kept: not taken for the same")
        }
        #expect(InputHead.digest([]) == "cbf29ce484222325")
        #expect(InputHead.digest(Array("a".utf8)[...]) == "af63dc4c8601ec8c")
    }

    @Test func theClusterKeepsItsPartitionCount() {
        let description = ClusterCheck.streamDescription(partitions: 4)
        #expect(ClusterCheck.storedPartitions(description) == 4)
        #expect(ClusterCheck.storedPartitions(nil) == nil)
        #expect(ClusterCheck.storedPartitions("made by hand") == nil)
        var info = JetStream.StreamInfo()
        info.description = description
        #expect(ClusterCheck.verdict(.success(info), partitions: 4, server: "s") == .ready)
        #expect(
            ClusterCheck.verdict(.success(info), partitions: 8, server: "s")
                == .problem(.partitions(stored: 4, given: 8)))
        #expect(ClusterCheck.Problem.partitions(stored: 4, given: 8).description.contains("set up with PARTITIONS=4"))
        #expect(ClusterCheck.Problem.partitions(stored: 4, given: 8).description.contains("given PARTITIONS=8"))
        info.description = nil // a stream from an older setup: nothing to check
        #expect(ClusterCheck.verdict(.success(info), partitions: 8, server: "s") == .ready)
    }
}

/// The same on a real nats-server (started and stopped by pid by the test).
@Suite(.serialized) struct OperatorMistakeLiveTests {
    static func connect(_ server: NatsServer) throws -> JetStream {
        try JetStream(NatsConnection(.init(servers: [server.url], name: "test")))
    }

    @Test func setupKeepsWhatExistsAndWipeKeepsEpochsRising() throws {
        let server = try LiveTests.server()
        defer { server.stop() }
        let js = try Self.connect(server)
        let control = ClusterControl(js)
        let made = try control.setup(LiveTests.settings(), timeout: 30)
        #expect(made.hasPrefix("setup: made stream TYPINGD"))
        _ = try js.publish(NatsMessage(subject: Names.commandSubject(0), data: Array("{}".utf8)))
        let leases = try KeyValue.open(Names.leaseBucket, in: js)
        let epoch = try leases.create(Names.leaseKey(0), Array("owner".utf8))
        // Again, on a cluster that holds data: nothing changes, and it says so.
        let again = try control.setup(LiveTests.settings(), timeout: 30)
        #expect(again.hasPrefix("setup: nothing to do"), "\(again)")
        #expect(try js.streamInfo(Names.stream).messages == 1)
        #expect(try leases.get(Names.leaseKey(0))?.revision == epoch)
        // Other settings than the cluster's: an error naming the difference.
        var eight = LiveTests.settings()
        eight.partitions = 8
        #expect { try control.setup(eight, timeout: 30) } throws: { error in
            "\(error)".contains("stream TYPINGD has PARTITIONS=2, the settings 8") && "\(error)".contains("ctl wipe")
        }
        // A wipe while an owner holds a lease: refused, nothing deleted.
        #expect { try control.wipe(LiveTests.settings(), force: false, timeout: 30) } throws: { error in
            "\(error)".contains("refused: owners hold leases (partition 0: owner)")
        }
        #expect(try js.streamInfo(Names.stream).messages == 1)
        // Forced: everything empty, and the next owner's epoch above the last one.
        let said = try control.wipe(LiveTests.settings(), force: true, timeout: 30)
        #expect(said.contains { $0.contains("deleted TYPINGD: 1 messages") })
        #expect(try js.streamInfo(Names.stream).messages == 0)
        let next = try KeyValue.open(Names.leaseBucket, in: js).create(Names.leaseKey(1), Array("owner".utf8))
        #expect(next > epoch, "epoch \(next) after the wipe, \(epoch) before")
    }

    /// A wipe with a shorter LEASE_TTL than the bucket's: the bucket's TTL (and
    /// its duplicates window, which may not outlast it) shortened, not an error.
    @Test func aWipeWithAShorterLeaseTTLShortensTheBucketsTTL() throws {
        let server = try LiveTests.server()
        defer { server.stop() }
        let js = try Self.connect(server)
        let control = ClusterControl(js)
        _ = try control.setup(LiveTests.settings(), timeout: 30)
        var shorter = LiveTests.settings()
        shorter.leaseTTL = LiveTests.settings().leaseTTL - 5
        _ = try control.wipe(shorter, force: true, timeout: 30)
        #expect(try js.streamInfo("KV_" + Names.leaseBucket).maxAge == Int64(shorter.leaseTTL * 1e9))
    }

    @Test func everyRoleTellsNoJetStreamAndNotSetUpWithinSeconds() throws {
        let path = try LiveTests.requireServerPath()
        let plain = try NatsServer(path: path, jetStream: false)
        defer { plain.stop() }
        var started = ClusterControl.now()
        #expect { _ = try ClusterCheck.verify(try Self.connect(plain), partitions: 2, log: { _ in }) } throws: {
            error in
            if case .noJetStream = error as? ClusterCheck.Problem { return "\(error)".contains("ctl setup") }
            return false
        }
        #expect(ClusterControl.now() - started < 15)
        let bare = try LiveTests.server()
        defer { bare.stop() }
        let js = try Self.connect(bare)
        started = ClusterControl.now()
        #expect { _ = try ClusterCheck.verify(js, partitions: 2, log: { _ in }) } throws: { error in
            (error as? ClusterCheck.Problem) == .notSetUp && "\(error)".contains("Run `typingd-cluster ctl setup`")
        }
        #expect(ClusterControl.now() - started < 15)
        try ClusterControl(js).setup(LiveTests.settings(), timeout: 30)
        #expect(try ClusterCheck.verify(js, partitions: 2, log: { _ in }) != nil)
        #expect { _ = try ClusterCheck.verify(js, partitions: 3, log: { _ in }) } throws: { error in
            (error as? ClusterCheck.Problem) == .partitions(stored: 2, given: 3)
        }
    }

    /// A file of `lines` JSON lines, its descriptor at byte 0.
    static func input(_ lines: [String]) throws -> Int32 {
        var template = Array("/tmp/typingd-input-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else { throw ClusterControl.Failure("mkstemp failed") }
        unlink(String(cString: template))
        let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        lseek(fd, 0, SEEK_SET)
        return fd
    }

    @Test func aRouterNameGivenAnotherInputIsRefusedBeforeStoring() throws {
        let server = try LiveTests.server()
        defer { server.stop() }
        let js = try Self.connect(server)
        try ClusterControl(js).setup(LiveTests.settings(), timeout: 30)
        func route(_ lines: [String], newInput: Bool = false) throws -> Int32 {
            var options = Router.Configuration()
            options.name = "reused"
            options.partitions = 2
            options.replicas = 1
            options.newInput = newInput
            let connection = try NatsConnection(.init(servers: [server.url], name: "router"))
            defer { connection.close() }
            let fd = try Self.input(lines)
            defer { close(fd) }
            return try Router(configuration: options, connection: connection).run(input: fd)
        }
        let first = (0..<40).map { "{\"cmd\":\"join\",\"conv\":\"c\($0)\",\"user\":\"u\"}" }
        let second = (0..<60).map { "{\"cmd\":\"join\",\"conv\":\"d\($0)\",\"user\":\"v\"}" }
        #expect(try route(first) == 0)
        let stored = try js.streamInfo(Names.stream).messages
        #expect(try route(second) == 64, "another input under a used name")
        #expect(try route(Array(first.prefix(10))) == 64, "a shorter input")
        #expect(try js.streamInfo(Names.stream).messages == stored, "nothing stored by a refused router")
        #expect(try route(first) == 0, "the same input resumes (at its end: nothing more to send)")
        #expect(try js.streamInfo(Names.stream).messages == stored)
        #expect(try route(second, newInput: true) == 0)
        #expect(try js.streamInfo(Names.stream).messages > stored)
    }
}
