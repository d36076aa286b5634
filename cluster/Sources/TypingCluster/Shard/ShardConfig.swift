import Foundation
import TypingCore
@_spi(Daemon) import TypingProtocol

/// A shard's settings.
public struct ShardConfig: Sendable {
    public var servers: [String]
    public var partition: Int
    public var buckets: Int
    public var session: SessionConfiguration
    /// typingd's `--audience open` (a closed view receives nothing).
    public var audienceOpen = false
    public var auditPath: String?
    public var snapshotEvery = 1000
    public var replicas = 3
    public var leaseTTL = 10.0
    public var tickMs = 100
    public var callTimeoutMs: Int64 = 2000
    public var snapshotTimeoutMs: Int64 = 10000
    public var ackWaitMs: Int64 = 5000
    public var maxAckPending: Int64 = 4096
    public var consumerReplicas = 1
    public var fetch = 256
    /// Threads that parse a message's lines, the applying one included (typingd's
    /// --threads: the cores by default).
    public var threads = max(1, min(64, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    public var pingMs: Int64 = 1000
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
