import ArgumentParser
import NatsClient
import TypingCluster
#if canImport(Glibc)
import Glibc
#endif

/// `typingd-cluster ctl`: small operations on the cluster.
struct Ctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set the cluster up, wait for it, and tell where it stands.",
        subcommands: [Setup.self, Wipe.self, Ready.self, Idle.self, Leader.self, Info.self, Stats.self, Settings.self]
    )

    /// A line on stderr, `ctl: ` and the time first, and exit status 1.
    static func fail(_ text: String) -> ExitCode {
        clusterLog("ctl", text)
        return ExitCode(1)
    }

    /// Options of every ctl action that talks to the cluster.
    struct Common: ParsableArguments {
        @OptionGroup var cluster: ClusterOptions

        @Option(
            name: .long,
            help: ArgumentHelp("Seconds to wait for the cluster, a leader, or idle partitions.", valueName: "s"))
        var timeout: Double = 60

        func validate() throws {
            guard timeout.isFinite, timeout > 0, timeout <= 86400 else {
                throw ValidationError("--timeout must be above 0 and at most 86400")
            }
        }

        func settings() throws -> ClusterSettings {
            do {
                return try cluster.settings()
            } catch let failure as ClusterSettings.Failure {
                throw Ctl.fail(failure.description)
            }
        }

        /// A connection and JetStream, or a clear line and exit 1.
        func connect(_ settings: ClusterSettings) throws -> ClusterControl {
            let servers = try cluster.serverList(settings)
            let options = NatsConnection.Options(
                servers: servers, name: "typingd-cluster ctl",
                pingInterval: Int64(settings.pingMs), connectTimeout: 2000)
            let start = monotonicSeconds()
            while true {
                do {
                    let connection = try NatsConnection(options)
                    return ClusterControl(try JetStream(connection, wait: 5000))
                } catch {
                    if monotonicSeconds() - start >= timeout {
                        throw Ctl.fail(
                            "no NATS server answered at \(servers.joined(separator: ",")) within \(timeout) s (\(error))"
                        )
                    }
                    pause(.milliseconds(200))
                }
            }
        }
    }

    /// The options that shape the streams and buckets (setup and wipe).
    struct Shape: ParsableArguments {
        @Option(name: .long, help: ArgumentHelp("Replicas of every stream and bucket (REPLICAS).", valueName: "n"))
        var replicas: Int?
        @Option(
            name: .long,
            help: ArgumentHelp("The command stream's storage, file or memory (STORAGE).", valueName: "kind"))
        var storage: String?
        @Option(
            name: .customLong("lease-ttl"),
            help: ArgumentHelp("The lease bucket's TTL, seconds (LEASE_TTL).", valueName: "s"))
        var leaseTTL: String?

        func apply(to settings: inout ClusterSettings) throws {
            do {
                if let replicas { try settings.set("REPLICAS", String(replicas), from: "--replicas") }
                if let storage { try settings.set("STORAGE", storage, from: "--storage") }
                if let leaseTTL { try settings.set("LEASE_TTL", leaseTTL, from: "--lease-ttl") }
            } catch {
                throw Ctl.fail(error.description)
            }
        }
    }

    struct Setup: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Make what is missing of the command stream, the snapshot stream and the buckets; change nothing that exists.",
            discussion: """
                Stream TYPINGD (subjects typingd.cmd.*, STORAGE, REPLICAS, a 2-minute duplicate \
                window, PARTITIONS kept in its description: every role refuses another count), \
                stream TYPINGD_SNAPSHOTS (typingd.store.*.*, file), buckets typingd-leases (TTL \
                LEASE_TTL), typingd-routers (the routers' checkpoints) and typingd-router-names \
                (TTL 15 s: the routers' name fences), REPLICAS each. What exists is kept with what \
                it holds: run twice, the second says there was nothing to do. One that exists \
                otherwise than the settings (PARTITIONS, STORAGE, REPLICAS, LEASE_TTL) is an error \
                naming each difference, exit 1: `ctl wipe` makes them anew.
                """)
        @OptionGroup var common: Common
        @OptionGroup var shape: Shape

        func run() throws {
            var settings = try common.settings()
            try shape.apply(to: &settings)
            let control = try common.connect(settings)
            do {
                print("ctl: " + (try control.setup(settings, timeout: common.timeout)))
            } catch {
                throw Ctl.fail(error.description)
            }
        }
    }

    struct Wipe: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start the cluster over: delete every command, snapshot and router checkpoint, then set up anew.",
            discussion: """
                Deletes stream TYPINGD (every command stored, every shard's consumer), stream \
                TYPINGD_SNAPSHOTS and buckets typingd-routers and typingd-router-names; empties \
                bucket typingd-leases without deleting it, so its revisions (the owners' epochs) \
                go on rising and no gateway takes a new owner for a deposed one; then makes \
                everything anew with the settings given (as setup). Says what it deleted. Refused \
                (exit 1) while an owner holds a lease: stop the shards (SIGTERM releases a lease) \
                and the routers first, or give --force (the owners then lose their leases, start \
                over as standbys and take them again, on the empty stream). Running routers are \
                not detected: stop them first, or their next lines are numbered after lines the \
                wipe deleted. Restart gateways after a wipe: what they show is from before it.
                """)
        @OptionGroup var common: Common
        @OptionGroup var shape: Shape
        @Flag(name: .long, help: "Wipe even while owners hold leases (they lose them and start over as standbys).")
        var force = false

        func run() throws {
            var settings = try common.settings()
            try shape.apply(to: &settings)
            let control = try common.connect(settings)
            do {
                for line in try control.wipe(settings, force: force, timeout: common.timeout) {
                    print(line.hasPrefix("ctl: ") ? line : "ctl: " + line)
                }
            } catch {
                throw Ctl.fail(error.description)
            }
        }
    }

    struct Ready: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Wait until JetStream answers.")
        @OptionGroup var common: Common

        func run() throws {
            let control = try common.connect(try common.settings())
            do { try control.ready(timeout: common.timeout) } catch { throw Ctl.fail(error.description) }
        }
    }

    struct Idle: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Wait until every partition's consumer has nothing pending and its owner has applied the last message stored for it.",
            discussion: """
                Three looks in a row, 0.3 s apart: each partition's consumer has nothing pending nor \
                unacknowledged, and each owner's applied_seq reached the stream_last_seq it gave at \
                the previous look.
                """)
        @OptionGroup var common: Common

        func run() throws {
            let settings = try common.settings()
            let control = try common.connect(settings)
            do {
                print("ctl: " + (try control.idle(partitions: settings.partitions, timeout: common.timeout)))
            } catch {
                throw Ctl.fail(error.description)
            }
        }
    }

    struct Leader: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print the node leading the stream, or partition P's consumer, or another stream (--stream KV_typingd-leases: the lease bucket)."
        )
        @OptionGroup var common: Common
        @Option(
            name: .long, help: ArgumentHelp("Partition P's consumer (shard-P) instead of the stream.", valueName: "P"))
        var consumer: Int?
        @Option(
            name: .long,
            help: ArgumentHelp("Another stream than TYPINGD (a bucket's is KV_<bucket>).", valueName: "name"))
        var stream: String?

        func run() throws {
            let control = try common.connect(try common.settings())
            do {
                print(try control.leader(consumer: consumer, stream: stream, timeout: common.timeout))
            } catch {
                throw Ctl.fail(error.description)
            }
        }
    }

    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What the stream holds, where each partition's consumer is.")
        @OptionGroup var common: Common

        func run() throws {
            let settings = try common.settings()
            let control = try common.connect(settings)
            do {
                for line in try control.info(partitions: settings.partitions) { print(line) }
            } catch {
                throw Ctl.fail(error.description)
            }
        }
    }

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every shard's stats (owners and standbys), one JSON line each, waiting a second for them.")
        @OptionGroup var common: Common
        @Flag(name: .long, help: "One Prometheus exposition, each metric's # HELP and # TYPE once.")
        var prometheus = false

        func run() throws {
            let settings = try common.settings()
            let control = try common.connect(settings)
            let answers: [[UInt8]]
            do { answers = try control.askStats(prometheus: prometheus, wait: 1.0) } catch {
                throw Ctl.fail(error.description)
            }
            if answers.isEmpty {
                throw Ctl.fail(
                    "no shard answered \(Names.statsSubject) (is any shard running on "
                        + "\(try common.cluster.serverList(settings).joined(separator: ","))?)")
            }
            if prometheus {
                writeAll(1, Array(ClusterControl.mergePrometheus(answers).utf8))
                return
            }
            let (lines, strays, missing) = ClusterControl.statsRows(answers, partitions: settings.partitions)
            for stray in strays {
                clusterLog("ctl", "an answer that is not a shard's stats: \(stray.debugDescription)")
            }
            writeAll(1, Array(lines.map { $0 + "\n" }.joined().utf8))
            if !missing.isEmpty { throw Ctl.fail("no owner answered for partitions \(missing)") }
        }
    }

    struct Settings: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print each setting as NAME=VALUE, with what it wants.",
            discussion:
                "The values are what every role would use here: the options given, else the environment, else --config's file, else the defaults."
        )
        @OptionGroup var cluster: ClusterOptions

        /// `value` as a shell word: as is when plain, else in single quotes.
        static func quoted(_ value: String) -> String {
            let plain =
                !value.isEmpty
                && value.utf8.allSatisfy { byte in
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                        || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                        || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ":")
                }
            if plain { return value }
            return "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        }

        func run() throws {
            let settings: ClusterSettings
            do { settings = try cluster.settings() } catch let failure as ClusterSettings.Failure {
                throw Ctl.fail(failure.description)
            }
            var text = ""
            for (line, setting) in zip(settings.lines, ClusterSettings.table) {
                let value = String(line.dropFirst(setting.name.count + 1))
                text += "\(setting.name)=\(Self.quoted(value))\t# \(setting.wanted)\n"
            }
            writeAll(1, Array(text.utf8))
        }
    }
}
