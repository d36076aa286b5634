import ArgumentParser
import NatsClient
import Synchronization
import TypingCluster
#if canImport(Glibc)
import Glibc
#endif

/// `typingd-cluster route`: command lines in, each stored in its partition's stream.
struct RouteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "route",
        abstract: "Store each command line of stdin in the stream of its partition; never lose or double a line.",
        discussion: """
            Routing. A line goes to its conversation's partition (typingd-cluster partition tells \
            which), to every partition for offline, user, tick, stats and snapshot, and to partition \
            0 when it is no command (that partition's engine answers it with its error); a command of \
            one conversation goes to that conversation's partition even when another of its fields \
            is wrong (its engine answers with the error). A command for every partition is decoded \
            exactly as the shards' engine decodes it. Blank lines are skipped; a line \
            whose id starts with "typingd:" (the shards' own; a command or not) or longer than the \
            servers' largest message less 4096 bytes is refused, on stderr.

            Reading. Lines are cut as typingd cuts its input: a UTF-8 byte order mark at the very \
            start is skipped, one CR before LF is dropped, a last line without LF counts. A line \
            over the limit (its CR counted) is dropped as it is read, never held whole, and counted \
            in the stats' lines_too_long.

            Messages. Lines go in rounds: a line read while nothing is in flight goes at once \
            (a keystroke after a quiet moment waits for nothing); lines read while a round is in \
            flight wait for it and share the next one, which takes every partition's waiting \
            lines (up to --batch-lines and --batch-bytes each) at once, at least --linger-ms after \
            the last began. So a busy partition costs at most 1000/linger messages a second, sent \
            together with the other partitions' (the servers replicate them in one go), and a \
            line waits at most about a linger plus a store for its message. One message in \
            flight per partition keeps its lines in input order. Each carries Nats-Msg-Id NAME:P:FIRST:COUNT, Typingd-Router NAME and \
            Typingd-Lines FIRST (the number, from 1, of its first line among all lines NAME sent to \
            P), and Typingd-Encoding deflate when its lines are stored deflated (unless --no-deflate). The \
            numbers are input positions: a message re-sent after a restart has its old id, and a \
            shard drops a line it already applied from NAME.

            The name. One name is one input. While it runs, the router holds key NAME of bucket \
            typingd-router-names (renewed every second): a second router with the same name is \
            refused before it reads a line (exit 75). A router killed without stopping frees its \
            name 15 s after its last renewal; at once for a restart on the same host.

            Restarts. The router checkpoints the input position that is STORED (key NAME of bucket \
            typingd-routers) every --checkpoint-ms and at the end, and resumes there: a regular \
            file on stdin is seeked, a pipe has the bytes skipped (or give --input-offset N when \
            stdin starts at byte N of the input). --from-start ignores the checkpoint. The \
            checkpoint keeps the input's first bytes (up to 4 KiB, as a digest): stdin that \
            does not begin with them (another input, or a shorter one) is refused before \
            anything is stored (exit 64), saying how to go on: the same input again, a new \
            --name, or --new-input (this stdin read whole, its lines numbered on after those \
            the name sent). With --input-offset the first bytes are not on stdin: not compared.

            Stopping. SIGTERM or SIGINT stops reading, waits until every line read is stored, writes \
            the checkpoint and says where a restart resumes; exit 0. A second signal exits at once \
            (status 1): a restart then re-sends lines that the ids and the shards drop.

            Outages. Nothing but the end of input or a signal ends the router: each publish is \
            retried with the same id (back-off up to 2 s), and every 5 s it logs "waiting for the \
            cluster". It reads on until --queue-lines wait for one partition.

            Time. With --stamp, a command without "at" gets the router's clock (ms since 1970, never \
            going back). The owner of each partition ticks it.

            Stats. A request on typingd.stats.router.NAME gets JSON, or Prometheus text when its \
            body is "prometheus".

            The cluster. Before anything, the router checks the cluster: a server without \
            JetStream, a cluster not set up (no stream TYPINGD: run ctl setup) or set up with \
            another PARTITIONS ends it within seconds (exit 78); an outage is waited through.

            Exit status: 0 when every line read is stored; 1 after a second signal or a broken \
            input; 64 for a bad option or a checkpoint that does not fit them (another input, \
            other partitions); 75 when the name is taken; 78 when the cluster is not one it can \
            run on.
            """
    )

    @OptionGroup var cluster: ClusterOptions

    @Option(
        help: ArgumentHelp(
            "This input's name: ids, headers, checkpoint key; 1 to 64 of A-Z a-z 0-9 _ -.", valueName: "name"))
    var name = "router"

    @Flag(help: "Stamp \"at\" (ms since 1970) on commands that have none.")
    var stamp = false

    @Option(
        name: .customLong("linger-ms"),
        help: ArgumentHelp(
            "Rounds of messages begin at least this far apart (0: as soon as the last is stored).", valueName: "ms"))
    var lingerMs = Router.defaultLinger.seconds * 1000

    @Option(name: .customLong("batch-lines"), help: ArgumentHelp("Lines per message at most.", valueName: "n"))
    var batchLines = 4000

    @Option(
        name: .customLong("batch-bytes"),
        help: ArgumentHelp(
            "Bytes of lines per message at most, before deflating (at most the servers' max_payload).", valueName: "n"))
    var batchBytes = 512 * 1024

    @Flag(
        inversion: .prefixedNo,
        help:
            "Deflate each message's lines (zlib level 1): about a third of the bytes stored and sent, for CPU in the router and the shards."
    )
    var deflate = Router.Configuration().deflate

    @Option(
        name: .customLong("queue-lines"),
        help: ArgumentHelp("Lines waiting for one partition before reading stops.", valueName: "n"))
    var queueLines = 20_000

    @Option(
        name: .customLong("ack-timeout"),
        help: ArgumentHelp("Deadline of one publish or checkpoint write, seconds; retried after it.", valueName: "s"))
    var ackTimeout = 2.0

    @Option(
        name: .customLong("checkpoint-ms"),
        help: ArgumentHelp("How often the stored position is checkpointed.", valueName: "ms"))
    var checkpointMs = 1000.0

    @Option(help: ArgumentHelp("At most this many lines a second (default: no limit).", valueName: "n"))
    var rate = 0.0

    @Option(
        name: .customLong("input-offset"), help: ArgumentHelp("stdin starts at byte N of the input.", valueName: "n"))
    var inputOffset = 0

    @Flag(name: .customLong("from-start"), help: "Ignore the checkpoint: start at stdin's first byte.")
    var fromStart = false

    @Flag(
        name: .customLong("new-input"),
        help:
            "stdin is a new input for this --name: read it from its first byte, its lines numbered on after those the name sent (so the shards apply them all)."
    )
    var newInput = false

    func validate() throws {
        let plain = name.utf8.allSatisfy {
            ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F
                || $0 == 0x2D
        }
        guard plain, (1...64).contains(name.utf8.count) else {
            throw ValidationError(
                "--name \(name.debugDescription): use 1 to 64 letters, digits, _ or - (it is a header, a subject token and a key)"
            )
        }
        guard lingerMs >= 0, lingerMs.isFinite else { throw ValidationError("--linger-ms must not be negative") }
        guard rate >= 0, rate.isFinite else { throw ValidationError("--rate must not be negative") }
        guard inputOffset >= 0 else { throw ValidationError("--input-offset must not be negative") }
        guard batchLines > 0 else { throw ValidationError("--batch-lines must be positive") }
        guard batchBytes > 0 else { throw ValidationError("--batch-bytes must be positive") }
        guard queueLines > 0 else { throw ValidationError("--queue-lines must be positive") }
        guard ackTimeout > 0, ackTimeout <= 3600 else {
            throw ValidationError("--ack-timeout must be from 0 to 3600 s")
        }
        guard checkpointMs > 0, checkpointMs.isFinite else { throw ValidationError("--checkpoint-ms must be positive") }
        if newInput && (fromStart || inputOffset > 0) {
            throw ValidationError(
                "--new-input reads stdin from its first byte: it does not go with --from-start or --input-offset")
        }
        if fromStart && inputOffset > 0 {
            throw ValidationError("--from-start reads stdin from its first byte: it does not go with --input-offset")
        }
    }

    func run() throws {
        let settings = try cluster.settings()
        let servers = try cluster.serverList(settings)
        // Signals are taken by one thread, never by nats.c's.
        signal(SIGPIPE, SIG_IGN)
        let holder = RouterHolder()
        onSignals { label in
            guard let router = holder.router.withLock({ $0 }) else {
                clusterLog("router", "\(label) before connecting: nothing read, exiting")
                Glibc.exit(0)
            }
            router.stop(signal: label)
        }
        var configuration = Router.Configuration()
        configuration.name = name
        configuration.partitions = settings.partitions
        configuration.stamp = stamp
        configuration.linger = .ms(lingerMs)
        configuration.batchLines = batchLines
        configuration.batchBytes = batchBytes
        configuration.queueLines = queueLines
        configuration.deflate = deflate
        configuration.ackTimeout = .seconds(ackTimeout)
        configuration.checkpointEvery = .ms(checkpointMs)
        configuration.rate = rate
        configuration.inputOffset = inputOffset
        configuration.fromStart = fromStart
        configuration.newInput = newInput
        configuration.replicas = settings.replicas
        let connection = Self.connect(
            servers: servers, name: "router \(name)", pingMs: settings.pingMs,
            inOrder: cluster.serversInOrder)
        let router = try Router(configuration: configuration, connection: connection)
        holder.router.withLock { $0 = router }
        let status = router.run(input: 0)
        connection.close()
        throw ExitCode(status)
    }

    /// Connects, waiting as long as it takes (a line every 5 s).
    static func connect(servers: [String], name: String, pingMs: Int, inOrder: Bool) -> NatsConnection {
        let since = monotonicSeconds()
        var logged = since
        while true {
            do {
                var options = NatsConnection.Options(servers: servers, name: name, pingInterval: Int64(pingMs))
                options.inOrder = inOrder
                let events = NatsConnection.Events()
                events.disconnected = {
                    clusterLog(
                        "router", "disconnected from the server (no answer to 2 pings, or closed): moving to another")
                }
                events.reconnected = { clusterLog("router", "reconnected") }
                return try NatsConnection(options, events: events)
            } catch {
                let now = monotonicSeconds()
                if now - logged >= 5 {
                    clusterLog(
                        "router",
                        "waiting for the cluster: no server at \(servers.joined(separator: ",")) for \(Int(now - since)) s (\(error))"
                    )
                    logged = now
                }
                pause(.milliseconds(500))
            }
        }
    }
}

/// The router, once made, for the signal handler.
final class RouterHolder: Sendable {
    let router = Mutex<Router?>(nil)
}
