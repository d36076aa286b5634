import ArgumentParser
import Dispatch
import NatsClient
import Synchronization
import TypingCluster
#if canImport(Glibc)
import Glibc
#endif

/// `typingd-cluster gateway`: the indicators of a set of viewers, printed as they
/// arrive, kept right through gaps.
struct GatewayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Print a set of viewers' indicators and announcements as they arrive, kept right through gaps.",
        discussion: """
            Subscribes to typingd.viewers.B of each viewer's bucket (FNV-1a of the id modulo \
            VIEWER_BUCKETS), or to every bucket with --all-viewers (the viewers given and every \
            other it hears of). Each indicator of one of its viewers is printed on stdout as it \
            is applied, and so is each announcement (an announce event, for the viewer's screen \
            reader); indicators a resync answer sets are applied, not printed: stdout is what the \
            shards sent. A viewer's main screen and side pane ("pane":"side") are two screens.

            The gateway keeps the highest epoch per partition and drops a message of a lower one; \
            it resyncs (typingd.resync, one answer per partition, partitions that did not answer \
            asked again with a back-off up to 2 s) after a slow-consumer error, a reconnect, or a \
            new epoch. An answer replaces the viewer's screens of its partition, except a screen \
            a later message already set; queued messages an answer covers are dropped (an \
            announcement among them only when its screen no longer shows its sentence).

            At the end (--seconds, SIGTERM or SIGINT) it reads what the server sent (a flush), \
            what is queued and any resync due (at most --drain-s seconds), then writes every \
            viewer's final indicator per screen to --finals, one JSON line each: \
            {"viewer", "conv", "thread", "view", "pane", "indicator"} (the last indicator applied when it \
            shows someone, else null), and a summary on stderr. A shard that names another \
            number of viewer buckets (in a resync answer or its owner announcement) ends the \
            gateway with exit status 2, unless --all-viewers.
            """
    )

    @OptionGroup var cluster: ClusterOptions

    @Option(name: .long, help: ArgumentHelp("A viewer id (repeat for more).", valueName: "id"))
    var viewer: [String] = []

    @Option(name: .customLong("viewers-file"), help: ArgumentHelp("Viewer ids, one a line.", valueName: "file"))
    var viewersFile: String?

    @Flag(
        name: .customLong("all-viewers"),
        help: "One subscription, typingd.viewers.*: the viewers given and every other it hears of.")
    var allViewers = false

    @Option(
        name: .customLong("viewer-buckets"),
        help: ArgumentHelp("Viewer buckets, the shards' (VIEWER_BUCKETS; default 16).", valueName: "n"))
    var viewerBuckets: Int?

    @Option(
        name: .long,
        help: ArgumentHelp("Write each viewer's final indicator per screen here at the end.", valueName: "file"))
    var finals: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Also write each indicator applied and each announcement here, after the wall clock (ms) and a tab.",
            valueName: "file"))
    var received: String?

    @Option(name: .long, help: ArgumentHelp("End after this many seconds (0: never, the default).", valueName: "s"))
    var seconds: Double?

    @Option(
        name: .customLong("slow-ms"),
        help: ArgumentHelp(
            "Block this many ms per message (a busy gateway; for tests).", valueName: "ms", visibility: .hidden))
    var slowMs: Double = 0

    @Option(
        name: .customLong("pending-limit"),
        help: ArgumentHelp("Messages queued per subscription before the client drops (slow consumer).", valueName: "n"))
    var pendingLimit: Int = 65536

    @Option(
        name: .customLong("drain-s"),
        help: ArgumentHelp("At the end, finish the queue for at most this long.", valueName: "s"))
    var drainS: Double = 60

    @Flag(
        name: .customLong("no-resync"), help: ArgumentHelp("Never resync (to see what it costs).", visibility: .hidden))
    var noResync = false

    func validate() throws {
        if let seconds, !(seconds.isFinite && seconds >= 0 && seconds <= 1e9) {
            throw ValidationError("--seconds must be from 0 to 1e9")
        }
        guard slowMs.isFinite, slowMs >= 0, slowMs <= 60_000 else {
            throw ValidationError("--slow-ms must be from 0 to 60000")
        }
        guard (1...Int(Int32.max)).contains(pendingLimit) else {
            throw ValidationError("--pending-limit must be at least 1")
        }
        guard drainS.isFinite, drainS >= 0, drainS <= 86400 else {
            throw ValidationError("--drain-s must be from 0 to 86400")
        }
        if viewer.isEmpty && viewersFile == nil && !allViewers {
            throw ValidationError("give --viewer, --viewers-file or --all-viewers")
        }
    }

    func run() throws {
        var settings = try cluster.settings()
        if let viewerBuckets {
            try settings.set("VIEWER_BUCKETS", String(viewerBuckets), from: "--viewer-buckets")
        }
        var viewers = viewer
        if let viewersFile {
            let text = try ConfigFile.contents(of: viewersFile, option: "--viewers-file", limit: 256 << 20)
            viewers += text.split(separator: "\n").map(String.init).filter {
                !$0.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\r" }
            }
        }
        let output = try Output(received: received)
        var configuration = Gateway.Configuration(servers: try cluster.serverList(settings), viewers: viewers)
        configuration.allViewers = allViewers
        configuration.partitions = settings.partitions
        configuration.viewerBuckets = settings.viewerBuckets
        configuration.pendingLimit = pendingLimit
        configuration.slow = .ms(slowMs)
        configuration.resync = !noResync
        configuration.ping = .milliseconds(settings.pingMs)
        configuration.name = "typingd-cluster gateway"

        let stop = DispatchSemaphore(value: 0)
        // Signals go to one thread (set before any connection: nats.c's threads never take them).
        onSignals { _ in stop.signal() }
        let gateway: Gateway
        do {
            gateway = try Gateway(
                configuration,
                onUpdate: { update in
                    if update.source == .message, let line = update.line { output.event(line) }
                }, log: log, onMismatch: { _ in stop.signal() })
        } catch {
            log("no NATS server answered at \(configuration.servers.joined(separator: ",")): \(error)")
            throw ExitCode(1)
        }
        do {
            try gateway.checkCluster(log: log)
        } catch {
            log("\(error)")
            gateway.close()
            throw ExitCode(ClusterCheck.exitStatus)
        }
        if let seconds, seconds > 0 {
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { stop.signal() }
        }
        log("subscribed: \(gateway.viewers.count) viewers\(allViewers ? " and every other" : "")")
        if !gateway.viewers.isEmpty && !noResync {
            // Whatever was shown before it started: the owners up now (no retries).
            gateway.resync(patience: 0)
        }
        stop.wait()
        if let mismatch = gateway.mismatch {
            log(mismatch)
            gateway.close()
            throw ExitCode(2)
        }
        let finalScreens = gateway.finish(drain: .seconds(drainS))
        output.close()
        if let finals {
            var text: [UInt8] = []
            for item in finalScreens {
                text += item.jsonLine
                text.append(0x0A)
            }
            try writeFile(finals, text)
        }
        let c = gateway.counts
        let dropped = gateway.dropped
        log(
            "\(gateway.viewers.count) viewers, \(finalScreens.count) screens (\(finalScreens.filter { $0.indicator != nil }.count) showing someone): "
                + "\(c.messages) messages, \(c.indicators) indicators applied, \(c.announcements) announcements; dropped: \(c.staleEpoch) of a lower epoch, "
                + "\(c.covered) covered by a resync, \(c.slowConsumer) slow-consumer errors; \(c.reconnects) reconnects, "
                + "\(c.newEpochs) new epochs, \(c.resyncs) resyncs (\(c.resyncRequests) requests, \(c.resyncRetries) retries); "
                + "\(dropped) messages dropped by the client")
        gateway.close()
    }
}

/// One line on stderr, `gateway: ` and the time first.
@Sendable func log(_ text: String) {
    clusterLog("gateway", text)
}

/// Writes all of `bytes` to descriptor `fd` (what it cannot write is given up).
func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
        let count = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { return }
        offset += count
    }
}

/// Writes `bytes` to `path` (made or emptied; a regular file or a device such as /dev/null).
func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    guard let file = fopen(path, "wb") else {
        throw ValidationError("\(path): \(String(cString: strerror(errno)))")
    }
    defer { fclose(file) }
    let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    guard written == bytes.count, fflush(file) == 0 else {
        throw ValidationError("\(path): \(String(cString: strerror(errno)))")
    }
}

/// stdout, and the `--received` file: written under the gateway's lock, in order.
/// stdout is written a line at a time on a terminal; else in blocks of up to 64 KiB,
/// each written at most 10 ms after its first line (a reader of a pipe or a file
/// sees each indicator within 10 ms, not when the gateway ends).
final class Output: Sendable {
    let received: Mutex<OpaquePointer?>
    let buffer = Mutex<[UInt8]>([])
    let lineByLine = isatty(1) != 0

    init(received path: String?) throws {
        var file: OpaquePointer? = nil
        if let path {
            guard let opened = fopen(path, "wb") else {
                throw ValidationError("--received \(path): \(String(cString: strerror(errno)))")
            }
            file = OpaquePointer(opened)
        }
        received = Mutex(file)
    }

    /// An indicator or an announcement, as the shard sent it.
    func event(_ line: [UInt8]) {
        var out = line
        out.append(0x0A)
        let first = buffer.withLock { buffer in
            let wasEmpty = buffer.isEmpty
            buffer += out
            if lineByLine || buffer.count >= 1 << 16 {
                writeAll(1, buffer)
                buffer.removeAll(keepingCapacity: true)
                return false
            }
            return wasEmpty
        }
        if first {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { [self] in flush() }
        }
        received.withLock { file in
            guard let file else { return }
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            var row = Array("\(Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000)\t".utf8)
            row += out
            row.withUnsafeBytes { _ = fwrite($0.baseAddress, 1, $0.count, UnsafeMutablePointer<FILE>(file)) }
        }
    }

    /// Writes what is buffered.
    func flush() {
        buffer.withLock { buffer in
            if buffer.isEmpty { return }
            writeAll(1, buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    func close() {
        buffer.withLock { buffer in
            writeAll(1, buffer)
            buffer.removeAll()
        }
        received.withLock { file in
            if let file { fclose(UnsafeMutablePointer<FILE>(file)) }
            file = nil
        }
    }
}
