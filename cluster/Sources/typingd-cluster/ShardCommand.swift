import ArgumentParser
import Foundation
import Synchronization
import TypingCluster
import TypingdOptions
import TypingProtocol

/// `typingd-cluster shard --partition P`: the owner (or a standby) of one
/// partition, with typingd's engine in-process.
struct ShardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shard",
        abstract:
            "Own one partition: hold its lease, consume its commands, apply them with typingd's engine, publish the events.",
        discussion: """
            The shard applies its partition's commands (subject typingd.cmd.P of stream TYPINGD) \
            with typingd's engine in this process (manual clock, no drain, late "at" clamped), \
            publishes each fetch's events as one message per subject (headers Typingd-Epoch, \
            Typingd-Partition, Typingd-Seq), and acknowledges its durable consumer shard-P. \
            Indicators and announcements go to typingd.viewers.B of their viewer; timeouts \
            and announcements come due with the partition's clock, which stamped commands and \
            the owner's ticks move.

            Lease: key pP of bucket typingd-leases (epoch = the revision of its create), renewed \
            every second (TTL/3 if shorter); past TTL without a renewal the shard stops publishing at once and exits \
            75 (with --exit-on-lease-loss; by default it starts over in place, as a standby: \
            the same process runs itself again). A second shard for a held partition is a standby that takes over once the lease \
            lapses or is released. A takeover loads the partition's last snapshot (stream \
            TYPINGD_SNAPSHOTS, in chunks), replays it, replays the stream after it (its replies \
            and errors published; once caught up, each screen's last indicator, then each \
            announcement whose sentence its screen still shows), and makes its consumer anew.

            typingd's options follow `--` (default: TYPINGD_OPTIONS, paths from the working \
            directory). SIGTERM or SIGINT: finish, release the lease, exit 0. Exit 75: the lease \
            was lost (--exit-on-lease-loss).
            """
    )

    @OptionGroup var cluster: ClusterOptions

    @Option(help: ArgumentHelp("The partition this shard owns or stands by for.", valueName: "p"))
    var partition: Int

    @Option(
        name: .customLong("viewer-buckets"),
        help: ArgumentHelp("Indicator subjects typingd.viewers.B (VIEWER_BUCKETS).", valueName: "n"))
    var viewerBuckets: Int?

    @Option(
        help: ArgumentHelp(
            "Append every event as SEQ<TAB>P|B<TAB>EVENT, and SEQ<TAB>E<TAB>FIRST:PARTITION:EPOCH at the end of each entry's events.",
            valueName: "file"))
    var audit: String?

    @Option(
        name: .customLong("snapshot-every"),
        help: ArgumentHelp("Messages between snapshots (SNAPSHOT_EVERY; 0: never).", valueName: "n"))
    var snapshotEvery: Int?

    @Option(
        help: ArgumentHelp(
            "Replicas of the snapshot stream and lease bucket when the shard makes them (REPLICAS).", valueName: "n"))
    var replicas: Int?

    @Option(
        name: .customLong("lease-ttl"),
        help: ArgumentHelp("Seconds a lease lives without renewal (LEASE_TTL).", valueName: "s"))
    var leaseTTL: Double?

    @Option(
        name: .customLong("tick-ms"),
        help: ArgumentHelp(
            "The owner's tick into its partition every this many ms (TICK_MS; 0: none).", valueName: "ms"))
    var tickMs: Int?

    @Option(
        name: .customLong("call-timeout"), help: ArgumentHelp("Deadline of one cluster call, seconds.", valueName: "s"))
    var callTimeout: Double = 2

    @Option(
        name: .customLong("snapshot-timeout"),
        help: ArgumentHelp("Deadline to store or fetch a snapshot, seconds.", valueName: "s"))
    var snapshotTimeout: Double = 10

    @Option(
        name: .customLong("ack-wait"),
        help: ArgumentHelp("Seconds before JetStream delivers an unacknowledged message again.", valueName: "s"))
    var ackWait: Double = 5

    @Option(name: .customLong("max-ack-pending"), help: ArgumentHelp("The consumer's max ack pending.", valueName: "n"))
    var maxAckPending: Int = 4096

    @Option(
        name: .customLong("consumer-replicas"),
        help: ArgumentHelp("Replicas of the durable consumer's state (in memory).", valueName: "n"))
    var consumerReplicas: Int = 1

    @Option(help: ArgumentHelp("Messages per fetch.", valueName: "n"))
    var fetch: Int = 256

    @Option(
        help: ArgumentHelp(
            "Threads that decode a long message's lines while the engine applies them, the applying one included (1: none; default: the cores).",
            valueName: "n"))
    var threads: Int?

    @Flag(
        name: .customLong("exit-on-lease-loss"),
        help:
            "On losing the lease, exit 75 (for a service manager that restarts it) instead of starting over as a standby in place."
    )
    var exitOnLeaseLoss = false

    @Option(
        help: ArgumentHelp(
            "Exit (status 124) after this many seconds, whatever happens (0: never; for tests).", valueName: "s",
            visibility: .hidden))
    var lifetime: Double = 0

    @Argument(parsing: .postTerminator, help: ArgumentHelp("typingd's options, after --.", valueName: "typingd-option"))
    var options: [String] = []

    func validate() throws {
        guard (1...100_000).contains(fetch) else { throw ValidationError("--fetch must be from 1 to 100000") }
        if let threads, !(1...64).contains(threads) { throw ValidationError("--threads must be from 1 to 64") }
        guard callTimeout > 0, snapshotTimeout > 0, ackWait > 0, lifetime >= 0 else {
            throw ValidationError("times must be positive")
        }
    }

    func run() throws {
        DecoderArena.install() // as typingd decodes: jansson's values from a per-thread arena
        var settings = try cluster.settings()
        if let viewerBuckets { try settings.set("VIEWER_BUCKETS", String(viewerBuckets), from: "--viewer-buckets") }
        if let snapshotEvery { try settings.set("SNAPSHOT_EVERY", String(snapshotEvery), from: "--snapshot-every") }
        if let replicas { try settings.set("REPLICAS", String(replicas), from: "--replicas") }
        if let leaseTTL { try settings.set("LEASE_TTL", String(leaseTTL), from: "--lease-ttl") }
        if let tickMs { try settings.set("TICK_MS", String(tickMs), from: "--tick-ms") }
        guard (0..<settings.partitions).contains(partition) else {
            throw ValidationError(
                "--partition \(partition) is not one of 0..\(settings.partitions - 1) (--partitions \(settings.partitions))"
            )
        }
        var words = options
        if words.isEmpty {
            words = try SessionOptions.words(settings.typingdOptions)
        }
        // typingd's own option parsing: a bad option or phrase table stops the
        // shard here, before any lease is taken.
        let session: SessionConfiguration
        var typingdOptions: SessionOptions
        do {
            typingdOptions = try SessionOptions.parse(["--clock", "manual"] + words)
            session = try typingdOptions.configuration()
        } catch let failure as PhraseFiles.Failure {
            throw ValidationError("typingd options \(words.joined(separator: " ")): \(failure)")
        } catch {
            throw ValidationError(
                "typingd options \(words.joined(separator: " ")): \(SessionOptions.message(for: error))")
        }
        var config = Shard.Configuration(
            servers: try cluster.serverList(settings), partition: partition,
            buckets: settings.viewerBuckets, session: session)
        config.partitions = settings.partitions
        config.audienceOpen = session.engine.audience == .open
        config.auditPath = audit
        config.snapshotEvery = settings.snapshotEvery
        config.replicas = settings.replicas
        config.leaseTTL = .seconds(settings.leaseTTL)
        config.tick = .milliseconds(settings.tickMs)
        config.callTimeout = .seconds(callTimeout)
        config.snapshotTimeout = .seconds(snapshotTimeout)
        config.ackWait = .seconds(ackWait)
        config.maxAckPending = Int64(maxAckPending)
        config.consumerReplicas = consumerReplicas
        config.fetch = fetch
        if let threads { config.threads = threads }
        config.ping = .milliseconds(settings.pingMs)
        config.exitOnLeaseLoss = exitOnLeaseLoss
        config.serversInOrder = cluster.serversInOrder

        // Signals go to one thread, which asks the shard to stop (set before any
        // connection: nats.c's threads never take them).
        let stopper = StopHolder()
        onSignals { _ in stopper.stop() }
        if lifetime > 0 {
            let seconds = lifetime
            Thread.detachNewThread {
                pause(.seconds(seconds))
                _exit(124)
            }
        }
        let shard = try Shard(config: config)
        stopper.set(shard.shared)
        let status = shard.run()
        if status != 0 { throw ExitCode(status) }
    }
}

/// The shard's shared part, once made, for the signal thread (a signal before
/// it is made stops the shard as soon as it is).
final class StopHolder: Sendable {
    let state = Mutex<(shared: ShardShared?, stopped: Bool)>((nil, false))

    func set(_ shared: ShardShared) {
        let stopped = state.withLock {
            $0.shared = shared; return $0.stopped
        }
        if stopped { shared.stop() }
    }

    func stop() {
        let shared = state.withLock {
            $0.stopped = true; return $0.shared
        }
        shared?.stop()
    }
}
