import Foundation
import NatsClient
import Synchronization
import Testing
import TypingPartitioning
import TypingProtocol
@testable import TypingCluster
import TypingTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The router's reading loop (`Router.read`) on a pipe, with a live server for
/// its connection: what it stores in each partition, its position, its stats.
/// Nothing is sent; the lines stay in the partitions' queues, where the test
/// reads them.
@Suite(.serialized) struct RouterReadTests {
    /// A router of `partitions` partitions on `server`, ready to read.
    static func router(on server: NatsServer, partitions: Int) throws -> Router {
        let connection = try NatsConnection(.init(servers: [server.url], name: "test"))
        var options = Router.Configuration()
        options.partitions = partitions
        options.replicas = 1
        let router = try Router(configuration: options, connection: connection)
        router.parts = (0..<partitions).map {
            Router.Part(index: $0, subject: Names.commandSubject($0), routed: 0, stored: 0)
        }
        return router
    }

    /// This process's resident memory now, in bytes (/proc/self/statm), or 0.
    static func resident() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var text = [UInt8](repeating: 0, count: 128)
        let count = text.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        let fields = String(decoding: text[0..<count], as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * sysconf(Int32(_SC_PAGESIZE))
    }

    /// Runs `router.read` on a pipe that a thread fills by calling `write` with its
    /// write end, and closes it.
    static func read(_ router: Router, writing write: @escaping @Sendable (Int32) -> Void) throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            write(writeEnd)
            close(writeEnd)
            done.signal()
        }
        defer { close(readEnd) }
        try router.read(readEnd, skip: 0, tail: false)
        #expect(done.wait(timeout: .now() + 120) == .success)
    }

    /// Writes all of `bytes` to `fd`.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let wrote = Glibc.write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            if wrote < 0 && errno == EINTR { continue }
            if wrote <= 0 { return }
            offset += wrote
        }
    }

    /// What partition `p` holds: its lines, each with its LF.
    static func held(_ router: Router, _ p: Int) -> String {
        router.lock.lock()
        defer { router.lock.unlock() }
        return String(decoding: router.parts[p].bytes, as: UTF8.self)
    }

    static func stat(_ router: Router, _ name: String) -> Int? {
        router.stats()[name] as? Int
    }

    /// Input that starts with a UTF-8 byte order mark (split across writes, too):
    /// the mark is skipped as typingd skips it, so line 1 is a command of its
    /// conversation's partition, not "no command" for partition 0; the position
    /// still counts the mark's bytes.
    @Test(arguments: [0, 1, 2, 3]) func aByteOrderMarkAtTheStartIsSkipped(split: Int) throws {
        let server = try LiveTests.server()
        defer { server.stop() }
        let router = try Self.router(on: server, partitions: 4)
        let join = "{\"cmd\":\"join\",\"conv\":\"general\",\"user\":\"ann\"}"
        let type = "{\"cmd\":\"type\",\"conv\":\"general\",\"user\":\"ann\"}"
        let input: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("\(join)\r\n\(type)".utf8)
        try Self.read(router) { fd in
            input.withUnsafeBytes { bytes in
                Self.writeAll(fd, UnsafeRawBufferPointer(rebasing: bytes[..<split]))
                Self.writeAll(fd, UnsafeRawBufferPointer(rebasing: bytes[split...]))
            }
        }
        #expect(TypingPartitioning.Partition.of("general", among: 4) == 3)
        #expect(Self.held(router, 3) == "\(join)\n\(type)\n")
        #expect(Self.held(router, 0) == "")
        #expect(Self.stat(router, "lines_read") == 2)
        #expect(Self.stat(router, "read_offset") == input.count)
        router.lock.lock()
        let offsets = router.segments.map(\.offset)
        router.lock.unlock()
        #expect(offsets.allSatisfy { $0 == 3 + join.utf8.count + 2 || $0 == input.count }, "\(offsets)")
    }

    /// A line of 64 MiB between two commands: dropped as it is read (memory
    /// never holds it), counted in the stats as too long, and the lines around it
    /// routed; the position is the input's end.
    @Test func aLineOf64MiBIsDroppedAsItIsRead() throws {
        let server = try LiveTests.server()
        defer { server.stop() }
        let router = try Self.router(on: server, partitions: 4)
        let before = "{\"cmd\":\"join\",\"conv\":\"general\",\"user\":\"ann\"}\n"
        let after = "{\"cmd\":\"type\",\"conv\":\"general\",\"user\":\"ann\"}\n"
        let lineBytes = 64 << 20
        let growth = Mutex(0)
        try Self.read(router) { fd in
            let piece = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 16)
            let baseline = Self.resident()
            Array(before.utf8).withUnsafeBytes { Self.writeAll(fd, $0) }
            for _ in 0..<(lineBytes / piece.count) {
                piece.withUnsafeBytes { Self.writeAll(fd, $0) }
                let now = Self.resident() - baseline
                growth.withLock { $0 = max($0, now) }
            }
            Array("\n\(after)".utf8).withUnsafeBytes { Self.writeAll(fd, $0) }
        }
        #expect(Self.held(router, 3) == before + after)
        #expect(Self.stat(router, "lines_read") == 3)
        #expect(Self.stat(router, "lines_refused") == 1)
        #expect(Self.stat(router, "lines_too_long") == 1)
        #expect(Self.stat(router, "read_offset") == before.utf8.count + lineBytes + 1 + after.utf8.count)
        // Held whole, the line alone would be 64 MiB resident; dropped as it is
        // read, the router keeps at most its line limit (about 1 MiB) of it.
        let grew = growth.withLock { $0 }
        #expect(grew < 16 << 20, "resident memory grew by \(grew) bytes while a line of 64 MiB was read")
    }
}
