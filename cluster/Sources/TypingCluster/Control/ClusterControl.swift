import NatsClient
#if canImport(Glibc)
import Glibc
#endif

/// Small operations on the cluster (what `typingd-cluster ctl` does): make the
/// stream and buckets, wait for a leader or for the shards to be idle, read
/// where each shard is.
public struct ClusterControl: Sendable {
    /// A failure, in one line for the operator.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// The router name bucket's TTL, seconds: a router renews its name within it,
    /// and a name not renewed that long is free again (the router's fence).
    public static let routerNameTTL = Double(Names.routerNameTTL) / 1000

    public let jetStream: JetStream
    var connection: NatsConnection { jetStream.connection }

    public init(_ jetStream: JetStream) {
        self.jetStream = jetStream
    }

    package static func now() -> Double { monotonicSeconds() }

    /// How long setup asks again while JetStream finds no servers for the
    /// replicas (the nodes of a cluster just started are still joining).
    static let placementWait = 20.0

    /// Waits until JetStream answers (a stream lookup needs a meta leader too).
    /// A server without JetStream fails at once, and says so.
    public func ready(timeout: Double) throws(Failure) {
        let deadline = Self.now() + timeout
        while true {
            do {
                try jetStream.accountInfo()
                do {
                    _ = try jetStream.streamInfo(Names.stream)
                } catch  where error.isNotFound {}
                return
            } catch {
                if error.isNoResponders {
                    throw Failure(
                        "the server at \(connection.connectedURL ?? "?") has no JetStream (start nats-server "
                            + "with -js, or a jetstream block in its configuration)")
                }
                if Self.now() > deadline {
                    throw Failure("JetStream not ready after \(timeout) s (\(error))")
                }
                pause(.milliseconds(200))
            }
        }
    }

    /// One call, again while the cluster does not answer it (a node just started,
    /// a leader being elected) until `deadline`. With `gone`, a "not found" means
    /// done (a delete of what is not there). A create is the same request again
    /// (JetStream answers a create of what exists with the same configuration as
    /// a success), so a create whose reply was lost needs nothing more.
    ///
    /// "No suitable peers for placement" is asked again for at most
    /// ``placementWait`` seconds: right after a cluster starts, its nodes join the
    /// JetStream meta group one by one; a cluster with fewer nodes than the
    /// replicas never places them, and is told so.
    static func step(
        _ what: String, deadline: Double, timeout: Double, gone: Bool = false,
        _ call: () throws(NatsError) -> Void
    ) throws(Failure) {
        var placementSince: Double? = nil
        while true {
            do {
                try call()
                return
            } catch {
                if gone && error.isNotFound { return }
                if error.isNoPlacement {
                    let since = placementSince ?? Self.now()
                    placementSince = since
                    let wait = min(Self.placementWait, timeout)
                    if Self.now() - since > wait {
                        throw Failure(
                            "setup: \(what): \(error): JetStream found no servers to place its replicas on "
                                + "for \(Int(wait)) s. Start every node of the cluster "
                                + "(nats-server with JetStream), or set REPLICAS to at most their number")
                    }
                } else if !error.isTransient {
                    throw Failure("setup: \(what): \(error)")
                }
                if Self.now() > deadline {
                    throw Failure("setup: \(what): no success within \(timeout) s (\(error))")
                }
                pause(.milliseconds(300))
            }
        }
    }

    /// The streams and buckets ``setup(_:timeout:)`` makes, by stream name.
    static var buckets: [String] { [Names.leaseBucket, Names.routerBucket, Names.routerNameBucket] }

    /// Makes what is missing of: the command stream (storage and replicas of
    /// `settings`, a 2-minute duplicate window, PARTITIONS in its description),
    /// the snapshot stream (file), the lease bucket (TTL LEASE_TTL), the router
    /// checkpoint bucket and the router name bucket (TTL ``routerNameTTL``), all
    /// with the same replicas; then waits until each has a leader. What exists is
    /// left as it is, with what it holds: a second setup changes nothing and says
    /// so. One that exists otherwise than `settings` say (another PARTITIONS,
    /// storage, replicas or lease TTL) is an error naming each difference
    /// (``wipe(_:force:timeout:)`` makes them anew).
    @discardableResult
    public func setup(_ settings: ClusterSettings, timeout: Double) throws(Failure) -> String {
        try ready(timeout: timeout)
        let deadline = Self.now() + timeout
        let js = jetStream
        // What exists, and how it differs from the settings.
        var existing: [String: JetStream.StreamInfo] = [:]
        for name in [Names.stream, Names.snapshotStream] + Self.buckets.map({ "KV_" + $0 }) {
            var found: JetStream.StreamInfo? = nil
            try Self.step("reading stream \(name)", deadline: deadline, timeout: timeout) { () throws(NatsError) in
                do throws(NatsError) { found = try js.streamInfo(name) } catch  where error.isNotFound { found = nil }
            }
            if let found { existing[name] = found }
        }
        var differences: [String] = []
        if let stream = existing[Names.stream] {
            if let stored = ClusterCheck.storedPartitions(stream.description), stored != settings.partitions {
                differences.append(
                    "stream \(Names.stream) has PARTITIONS=\(stored), the settings \(settings.partitions)")
            }
            let storage = settings.storage == "memory" ? JetStream.Storage.memory : .file
            if stream.storage != storage {
                differences.append(
                    "stream \(Names.stream) has \(stream.storage) storage, the settings \(settings.storage)")
            }
            if stream.configuredReplicas != settings.replicas {
                differences.append(
                    "stream \(Names.stream) has \(stream.configuredReplicas) replicas, the settings \(settings.replicas)"
                )
            }
        }
        let leaseTTL = Int64((settings.leaseTTL * 1000).rounded()) * 1_000_000
        if let leases = existing["KV_" + Names.leaseBucket], leases.maxAge != leaseTTL {
            differences.append(
                "bucket \(Names.leaseBucket) has TTL \(Double(leases.maxAge) / 1e9) s, the settings LEASE_TTL=\(settings.leaseTTL)"
            )
        }
        if !differences.isEmpty {
            throw Failure(
                "setup: the cluster exists otherwise than the settings say, and setup changes nothing that exists: "
                    + differences.joined(separator: "; ")
                    + ". Give the cluster's settings, or stop every role and run `typingd-cluster ctl wipe` to make it anew "
                    + "with these (it deletes every command, snapshot and checkpoint stored)")
        }
        var made: [String] = []
        if existing[Names.stream] == nil {
            var stream = JetStream.StreamConfig(name: Names.stream, subjects: [Names.streamSubjects])
            stream.storage = settings.storage == "memory" ? .memory : .file
            stream.replicas = settings.replicas
            stream.duplicateWindow = 120_000
            stream.description = ClusterCheck.streamDescription(partitions: settings.partitions)
            let commandStream = stream
            try Self.step("making stream \(Names.stream)", deadline: deadline, timeout: timeout) {
                () throws(NatsError) in
                try js.addStream(commandStream)
            }
            made.append("stream \(Names.stream) (\(settings.storage) storage, PARTITIONS=\(settings.partitions))")
        }
        if existing[Names.snapshotStream] == nil {
            // Snapshots stay on disk whatever the command stream's storage: they are
            // the state a rebuild starts from once the stream behind them is purged.
            var snapshots = JetStream.StreamConfig(name: Names.snapshotStream, subjects: [Names.snapshotSubjects])
            snapshots.storage = .file
            snapshots.replicas = settings.replicas
            snapshots.allowDirect = true
            let snapshotStream = snapshots
            try Self.step("making stream \(Names.snapshotStream)", deadline: deadline, timeout: timeout) {
                () throws(NatsError) in
                try js.addStream(snapshotStream)
            }
            made.append("snapshot stream \(Names.snapshotStream)")
        }
        let ttls: [String: Double] = [
            Names.leaseBucket: settings.leaseTTL, Names.routerBucket: 0,
            Names.routerNameBucket: Self.routerNameTTL
        ]
        for bucket in Self.buckets where existing["KV_" + bucket] == nil {
            let config = KeyValue.Config(
                bucket: bucket, ttl: Int64((ttls[bucket] ?? 0) * 1000), replicas: settings.replicas)
            try Self.step("making bucket \(bucket)", deadline: deadline, timeout: timeout) { () throws(NatsError) in
                _ = try KeyValue.create(config, in: js)
            }
            made.append("bucket \(bucket)" + ((ttls[bucket] ?? 0) > 0 ? " (TTL \(ttls[bucket] ?? 0) s)" : ""))
        }
        // All have a leader before anyone uses them.
        for name in [Names.stream, Names.snapshotStream] + Self.buckets.map({ "KV_" + $0 }) {
            while true {
                do {
                    let info = try js.streamInfo(name)
                    if settings.replicas == 1 || info.leader != nil { break }
                } catch {
                    if Self.now() > deadline {
                        throw Failure("setup: made, but \(name) has no leader after \(timeout) s (\(error))")
                    }
                }
                if Self.now() > deadline { throw Failure("setup: made, but \(name) has no leader after \(timeout) s") }
                pause(.milliseconds(200))
            }
        }
        let kept = existing[Names.stream].map { stream in
            "stream \(Names.stream) holds \(stream.messages) messages (last seq \(stream.lastSequence))"
                + (ClusterCheck.storedPartitions(stream.description).map { ", PARTITIONS=\($0)" }
                    ?? ", no PARTITIONS kept (made by an older setup)")
        }
        if made.isEmpty {
            return "setup: nothing to do, everything exists and nothing was changed: \(kept ?? "")"
                + "; \(settings.replicas) replicas each (`ctl wipe` starts the cluster over)"
        }
        return "setup: made " + made.joined(separator: ", ") + ", \(settings.replicas) replicas each"
            + (existing.isEmpty
                ? ""
                : "; kept what existed (\(existing.keys.sorted().joined(separator: ", ")))"
                    + (kept.map { ": \($0)" } ?? ""))
    }

    /// The owners holding a lease now: partition → the holder's value.
    public func leaseHolders(partitions: Int) throws(Failure) -> [Int: String] {
        let kv: KeyValue
        do {
            kv = try KeyValue.open(Names.leaseBucket, in: jetStream)
            _ = try jetStream.streamInfo("KV_" + Names.leaseBucket)
        } catch {
            if error.isNotFound { return [:] }
            throw Failure("wipe: reading bucket \(Names.leaseBucket): \(error)")
        }
        var holders: [Int: String] = [:]
        for p in 0..<partitions {
            do {
                if let entry = try kv.get(Names.leaseKey(p)) {
                    holders[p] = String(decoding: entry.value, as: UTF8.self)
                }
            } catch {
                throw Failure("wipe: reading lease \(Names.leaseKey(p)): \(error)")
            }
        }
        return holders
    }

    /// Starts the cluster over: deletes the command stream (every command and
    /// consumer), the snapshot stream and the router buckets (checkpoints and name
    /// fences), empties the lease bucket without deleting it (its revisions, the
    /// owners' epochs, go on rising: a gateway never takes a new owner for a
    /// deposed one), sets its TTL to LEASE_TTL, then makes the rest anew as
    /// ``setup(_:timeout:)`` does. Refused while an owner holds a lease, unless
    /// `force` (the owners then lose their leases, start over as standbys and take
    /// them again at higher epochs, from the empty stream). Routers are not seen:
    /// stop them first.
    @discardableResult
    public func wipe(_ settings: ClusterSettings, force: Bool, timeout: Double) throws(Failure) -> [String] {
        try ready(timeout: timeout)
        let deadline = Self.now() + timeout
        let js = jetStream
        var stored: Int? = nil
        if let stream = try? js.streamInfo(Names.stream) { stored = ClusterCheck.storedPartitions(stream.description) }
        let holders = try leaseHolders(partitions: max(settings.partitions, stored ?? 0, 64))
        if !holders.isEmpty && !force {
            throw Failure(
                "wipe: refused: owners hold leases ("
                    + holders.keys.sorted().map { "partition \($0): \(holders[$0] ?? "")" }.joined(separator: "; ")
                    + "). Stop every shard (SIGTERM releases its lease) and router first, or give --force (the owners "
                    + "then lose their leases and start over as standbys, on the empty stream)")
        }
        var lines: [String] = []
        for name in [Names.stream, Names.snapshotStream]
            + [Names.routerBucket, Names.routerNameBucket].map({ "KV_" + $0 })
        {
            let info = try? js.streamInfo(name)
            try Self.step("deleting stream \(name)", deadline: deadline, timeout: timeout, gone: true) {
                () throws(NatsError) in
                try js.deleteStream(name)
            }
            if let info {
                lines.append("wipe: deleted \(name): \(info.messages) messages (last seq \(info.lastSequence))")
            }
        }
        let leaseStream = "KV_" + Names.leaseBucket
        if let info = try? js.streamInfo(leaseStream) {
            try Self.step("emptying bucket \(Names.leaseBucket)", deadline: deadline, timeout: timeout) {
                () throws(NatsError) in
                try js.purge(leaseStream, subject: "$KV.\(Names.leaseBucket).>", before: 0)
            }
            let ttl = Int64((settings.leaseTTL * 1000).rounded())
            if info.maxAge != ttl * 1_000_000 {
                try Self.step("setting the TTL of bucket \(Names.leaseBucket)", deadline: deadline, timeout: timeout) {
                    () throws(NatsError) in
                    try js.setMaxAge(leaseStream, milliseconds: ttl)
                }
            }
            lines.append(
                "wipe: emptied bucket \(Names.leaseBucket) (\(holders.count) leases held), kept: its revisions go on "
                    + "after \(info.lastSequence), so every new owner's epoch is above every earlier one")
        }
        lines.append("ctl: " + (try setup(settings, timeout: max(1, deadline - Self.now()))))
        return lines
    }

    /// The node leading the command stream, or partition `consumer`'s consumer,
    /// once there is one.
    public func leader(consumer: Int?, stream: String? = nil, timeout: Double) throws(Failure) -> String {
        let deadline = Self.now() + timeout
        while true {
            var leader: String? = nil
            if let consumer {
                leader = try? jetStream.consumerInfo(Names.stream, Names.consumer(consumer)).leader
            } else {
                leader = try? jetStream.streamInfo(stream ?? Names.stream).leader
            }
            if let leader, !leader.isEmpty { return leader }
            if Self.now() > deadline {
                throw Failure(
                    "no leader for "
                        + (consumer.map { "partition \($0)'s consumer" } ?? "stream \(stream ?? Names.stream)"))
            }
            pause(.milliseconds(200))
        }
    }

    /// Every answer to `typingd.stats` (owners and standbys) within `wait` seconds,
    /// or, with `enough`, once that many answered.
    public func askStats(prometheus: Bool, wait: Double, enough: (([[UInt8]]) -> Bool)? = nil) throws(Failure)
        -> [[UInt8]]
    {
        do {
            let inbox = connection.newInbox()
            let subscription = try connection.subscribe(inbox)
            defer { subscription.unsubscribe() }
            try connection.publish(
                NatsMessage(
                    subject: Names.statsSubject, reply: inbox,
                    data: prometheus ? Array("prometheus".utf8) : []))
            var answers: [[UInt8]] = []
            let deadline = Self.now() + wait
            while true {
                let left = deadline - Self.now()
                if left <= 0 { break }
                let next: NatsMessage?
                do {
                    next = try subscription.next(timeout: max(1, Int64(left * 1000)))
                } catch  where error.isNoResponders {
                    continue // the server's "no responders" status: nobody listens (yet)
                }
                guard let message = next else { break }
                if message.data.isEmpty { continue } // the server's "no responders" status
                answers.append(message.data)
                if let enough, enough(answers) { break }
            }
            return answers
        } catch {
            throw Failure("asking \(Names.statsSubject): \(error)")
        }
    }

    /// Each partition's owner's stats (the highest epoch when two answer), waiting
    /// up to 3 s for all of them.
    package func owners(partitions: Int) throws(Failure) -> [Int: JSONValue] {
        var rows: [Int: JSONValue] = [:]
        func take(_ body: [UInt8]) {
            guard let row = JSONValue.parse(body), row["role"]?.string == "owner", let p = row["partition"]?.int,
                let epoch = row["epoch"]?.int
            else { return }
            if let held = rows[p]?["epoch"]?.int, held >= epoch { return }
            rows[p] = row
        }
        _ = try askStats(prometheus: false, wait: 3.0) { answers in
            rows = [:]
            answers.forEach(take)
            return rows.count >= partitions
        }
        return rows
    }

    /// Waits until the shards are idle: every partition's consumer has nothing
    /// pending nor unacknowledged, and its owner has applied (and published) the
    /// partition's last message as it stood at the previous look (a tick of the
    /// owner's own may be on its way at any one look), three looks in a row. The
    /// consumer alone is not enough: one whose node came back reads that node's
    /// copy of the stream, still catching up, and says 0 pending.
    public func idle(partitions: Int, timeout: Double) throws(Failure) -> String {
        let deadline = Self.now() + timeout
        var quiet = 0
        var stored: [Int: Int] = [:] // partition -> its last message at the previous look (the owner's word)
        while true {
            var busy: [Int] = []
            for p in 0..<partitions {
                if let info = try? jetStream.consumerInfo(Names.stream, Names.consumer(p)) {
                    if info.pending > 0 || info.ackPending > 0 { busy.append(p) }
                } else {
                    busy.append(p)
                }
            }
            let rows = try owners(partitions: partitions)
            let late = (0..<partitions).filter { p in
                guard let applied = rows[p]?["applied_seq"]?.int, let last = stored[p] else { return true }
                return applied < last
            }
            stored = [:]
            for (p, row) in rows {
                if let last = row["stream_last_seq"]?.int { stored[p] = last }
            }
            quiet = busy.isEmpty && late.isEmpty ? quiet + 1 : 0
            if quiet >= 3 {
                return "idle: "
                    + rows.keys.sorted().map { p in
                        "partition \(p): applied through seq \(rows[p]?["applied_seq"]?.int ?? 0)"
                    }.joined(separator: "; ")
            }
            if Self.now() > deadline {
                let all = Set(busy + late).sorted()
                var text = "partitions \(all) still busy after \(timeout) s"
                for p in late {
                    if let row = rows[p] {
                        text +=
                            "; partition \(p): applied \(Self.show(row["applied_seq"])) of \(Self.show(row["stream_last_seq"]))"
                    } else {
                        text += "; partition \(p): no owner answered"
                    }
                }
                throw Failure(text)
            }
            pause(.milliseconds(300))
        }
    }

    static func show(_ value: JSONValue?) -> String {
        guard let value else { return "None" }
        return String(decoding: value.bytes, as: UTF8.self)
    }

    /// What the stream holds and where each partition's consumer is.
    public func info(partitions: Int) throws(Failure) -> [String] {
        do {
            let stream = try jetStream.streamInfo(Names.stream)
            var lines = [
                "stream \(Names.stream): \(stream.messages) messages stored (first seq \(stream.firstSequence), "
                    + "last seq \(stream.lastSequence)); \(stream.lastSequence) messages published in all"
            ]
            for p in 0..<partitions {
                let consumer: JetStream.ConsumerInfo
                do {
                    consumer = try jetStream.consumerInfo(Names.stream, Names.consumer(p))
                } catch  where error.isNotFound {
                    lines.append("partition \(p): no consumer \(Names.consumer(p)) (no shard has run since setup)")
                    continue
                }
                lines.append(
                    "partition \(p): acknowledged up to seq \(consumer.ackFloor), "
                        + "\(Int64(clamping: consumer.pending) &+ consumer.ackPending) pending")
            }
            return lines
        } catch {
            throw Failure("info: \(error)")
        }
    }

    /// The shards' Prometheus answers as one exposition: each metric's `# HELP` and `# TYPE`
    /// line once, then every shard's sample of it (the format wants a family's
    /// lines together), families in the order first seen.
    public static func mergePrometheus(_ answers: [[UInt8]]) -> String {
        var order: [String] = []
        var families: [String: [String]] = [:]
        var heads: [String: (help: String?, type: String?)] = [:]
        func add(_ name: String, _ line: String?) {
            if families[name] == nil {
                order.append(name)
                families[name] = []
            }
            if let line { families[name]?.append(line) }
        }
        for answer in answers {
            for line in String(decoding: answer, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true)
            {
                let text = String(line)
                if text.hasPrefix("# TYPE ") || text.hasPrefix("# HELP ") {
                    let words = text.split(separator: " ")
                    guard words.count >= 3 else { continue }
                    let name = String(words[2])
                    add(name, nil)
                    if text.hasPrefix("# TYPE ") {
                        if heads[name]?.type == nil { heads[name, default: (nil, nil)].type = text }
                    } else if heads[name]?.help == nil {
                        heads[name, default: (nil, nil)].help = text
                    }
                } else if !text.hasPrefix("#") {
                    let name =
                        text.split(separator: "{", maxSplits: 1).first.map {
                            $0.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
                        } ?? ""
                    add(name, text)
                }
            }
        }
        return order.flatMap { name in
            [heads[name]?.help, heads[name]?.type].compactMap { $0 } + (families[name] ?? [])
        }.map { $0 + "\n" }.joined()
    }

    /// Shards' JSON stats as lines, keys sorted, owners before standbys by
    /// partition; the answers that are no shard's stats; the partitions without
    /// an owner's answer.
    public static func statsRows(_ answers: [[UInt8]], partitions: Int) -> (
        lines: [String], strays: [String], missing: [Int]
    ) {
        var rows: [(Int, Bool, String)] = []
        var strays: [String] = []
        for body in answers {
            guard let row = JSONValue.parse(body), let p = row["partition"]?.int, case .object(let members) = row else {
                strays.append(String(decoding: body.prefix(200), as: UTF8.self))
                continue
            }
            let sorted = JSONValue.object(
                members.sorted { Array($0.0.utf16).lexicographicallyPrecedes(Array($1.0.utf16)) })
            rows.append((p, row["role"]?.string != "owner", String(decoding: sorted.bytes, as: UTF8.self)))
        }
        rows.sort { ($0.0, $0.1 ? 1 : 0) < ($1.0, $1.1 ? 1 : 0) }
        let owners = Set(rows.filter { !$0.1 }.map(\.0))
        return (rows.map(\.2), strays, (0..<partitions).filter { !owners.contains($0) })
    }
}
