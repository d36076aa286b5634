import TypingPartitioning
import TypingProtocol

/// Every name the roles share on the cluster: streams, subjects, buckets and
/// headers, in one place.
public enum Names {
    /// The command stream: every partition's lines, on ``commandSubject(_:)``.
    public static let stream = "TYPINGD"
    /// The subjects of ``stream``.
    public static let streamSubjects = "typingd.cmd.*"
    /// Where partition `p`'s lines are stored.
    public static func commandSubject(_ p: Int) -> String { "typingd.cmd.\(p)" }
    /// The durable consumer of partition `p`.
    public static func consumer(_ p: Int) -> String { "shard-\(p)" }

    /// The snapshot stream: each partition's snapshots, in chunks of at most the
    /// servers' max payload (nats.c has no object store).
    public static let snapshotStream = "TYPINGD_SNAPSHOTS"
    /// The subjects of ``snapshotStream``.
    public static let snapshotSubjects = "typingd.store.*.*"
    /// Where partition `p`'s snapshot chunks are stored.
    public static func snapshotChunkSubject(_ p: Int) -> String { "typingd.store.\(p).chunk" }
    /// Where partition `p`'s snapshot heads are stored (one per snapshot, after
    /// its chunks: which chunks, how long, its checksum, the stream sequence).
    public static func snapshotHeadSubject(_ p: Int) -> String { "typingd.store.\(p).head" }

    /// The owners' leases: key ``leaseKey(_:)``, one per partition; its revision
    /// is the owner's epoch.
    public static let leaseBucket = "typingd-leases"
    /// Partition `p`'s lease.
    public static func leaseKey(_ p: Int) -> String { "p\(p)" }
    /// The routers' checkpoints, by router name.
    public static let routerBucket = "typingd-routers"
    /// The routers' name fences, by router name: held while a router runs.
    public static let routerNameBucket = "typingd-router-names"
    /// How long a router's name fence outlives its last renewal, ms (the TTL of
    /// ``routerNameBucket``; a router renews it every second): longer than a
    /// leader election of the bucket plus noticing a dead server (see the
    /// README, "Shard"; the election measured in PERFORMANCE.md).
    public static let routerNameTTL: Int64 = 15_000

    /// Indicators for viewer bucket `b` (``viewerBucket(_:among:)``).
    public static func viewerSubject(_ bucket: Int) -> String { "typingd.viewers.\(bucket)" }
    /// Every viewer bucket's subject (a gateway that serves every viewer).
    public static let viewerSubjects = "typingd.viewers.*"
    /// A viewer's bucket: FNV-1a of its UTF-8 bytes modulo the bucket count.
    public static func viewerBucket(_ viewer: String, among buckets: Int) -> Int {
        Int(TypingPartitioning.Partition.hash(viewer.utf8) % UInt32(max(1, buckets)))
    }
    /// `typing` events of a conversation.
    public static func typingSubject(_ conv: String) -> String { "typingd.typing.\(token(conv))" }
    /// Replies to a request id given as a string.
    public static func replySubject(_ id: String) -> String { "typingd.reply.\(token(id))" }
    /// Replies to a request id given as a number: `=7`, never a string's token.
    public static func replySubject(number: Int) -> String { "typingd.reply.=\(number)" }
    /// Errors without an id, and `snapshot` replies without one, of partition `p`.
    public static func errorSubject(_ p: Int) -> String { "typingd.error.\(p)" }
    public static func snapshotReplySubject(_ p: Int) -> String { "typingd.snapshot.\(p)" }
    /// Stats of every owner; of partition `p`'s runners; of router `name`.
    public static let statsSubject = "typingd.stats"
    public static func statsSubject(_ p: Int) -> String { "typingd.stats.\(p)" }
    public static func routerStatsSubject(_ name: String) -> String { "typingd.stats.router.\(token(name))" }
    /// Partition `p`'s owner announcing itself once caught up: body
    /// `{"partition":P,"epoch":E,"viewer_buckets":B}`.
    public static func ownerSubject(_ p: Int) -> String { "typingd.owner.\(p)" }
    /// Every partition's owner announcements (a gateway checks their `viewer_buckets`).
    public static let ownerSubjects = "typingd.owner.*"
    /// A gateway's resync request: body `{"viewer":ID}`.
    public static let resyncSubject = "typingd.resync"

    /// A subject token for any id: itself when it is plain (`A–Z a–z 0–9 _ -`, at
    /// most 128 characters), else `~` and the hex of its UTF-8 bytes. Two ids never
    /// share a token.
    public static func token(_ text: String) -> String {
        let bytes = Array(text.utf8)
        let plain =
            !bytes.isEmpty && bytes.count <= 128
            && bytes.allSatisfy { byte in
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                    || byte == 0x5F || byte == 0x2D
            }
        if plain { return text }
        let digits = Array("0123456789abcdef".utf8)
        var hex = [UInt8]("~".utf8)
        hex.reserveCapacity(1 + bytes.count * 2)
        for byte in bytes {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 15)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// The headers of the roles' messages.
    public enum Header {
        /// JetStream's duplicate id.
        public static let messageID = "Nats-Msg-Id"
        /// The router that stored a message of lines, and the number of its first
        /// line among all lines that router sent to the partition (from 1).
        public static let router = "Typingd-Router"
        public static let lines = "Typingd-Lines"
        /// `deflate` when the lines are stored deflated (zlib).
        public static let encoding = "Typingd-Encoding"
        /// An owner's tick: its epoch.
        public static let tick = "Typingd-Tick"
        /// On everything a shard publishes: its epoch, partition, and the last
        /// stream sequence applied.
        public static let epoch = "Typingd-Epoch"
        public static let partition = "Typingd-Partition"
        public static let sequence = "Typingd-Seq"
    }
}
