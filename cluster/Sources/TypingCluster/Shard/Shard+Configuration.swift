import Foundation
import TypingCore
@_spi(Daemon) import TypingProtocol

extension Shard {
    /// A shard's settings. Every time is a `Duration`; the command line gives them
    /// in the units its options name (`--tick-ms`, `--lease-ttl` seconds...).
    public struct Configuration: Sendable {
        public var servers: [String]
        public var partition: Int
        /// The cluster's partition count (checked against the one `ctl setup` kept).
        public var partitions = ClusterSettings().partitions
        public var buckets: Int
        public var session: SessionConfiguration
        /// typingd's `--audience open` (a closed view receives nothing).
        public var audienceOpen = false
        public var auditPath: String?
        public var snapshotEvery = 1000
        public var replicas = 3
        /// How long a lease lives without renewal.
        public var leaseTTL = Duration.seconds(10)
        /// The owner's tick into its partition (zero: none).
        public var tick = Duration.milliseconds(100)
        /// The deadline of one cluster call.
        public var callTimeout = Duration.seconds(2)
        /// The deadline to store or fetch a snapshot.
        public var snapshotTimeout = Duration.seconds(10)
        /// How long JetStream waits for an acknowledgement before delivering again.
        public var ackWait = Duration.seconds(5)
        public var maxAckPending: Int64 = 4096
        public var consumerReplicas = 1
        public var fetch = 256
        /// Threads that parse a message's lines, the applying one included (typingd's
        /// --threads: the cores by default).
        public var threads = max(1, min(64, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        /// The connection's ping interval.
        public var ping = Duration.seconds(1)
        /// On losing its lease, exit 75 (for a service manager that restarts it)
        /// instead of starting over, in the same process, as a standby.
        public var exitOnLeaseLoss = false
        /// Whether the servers are tried in the order given (`--servers-in-order`).
        public var serversInOrder = false

        public init(servers: [String], partition: Int, buckets: Int, session: SessionConfiguration) {
            self.servers = servers
            self.partition = partition
            self.buckets = buckets
            self.session = session
        }
    }
}
