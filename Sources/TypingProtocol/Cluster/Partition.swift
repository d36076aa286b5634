import TypingCore

/// The one routing rule for running several typingd processes
/// (Protocol.md#running-several-typingd-processes): conversations are independent, so
/// each has one owning partition, and a command goes where the conversations it
/// names are.
///
/// A command that names a conversation goes to that conversation's partition:
/// FNV-1a (32 bits) of the conversation id's UTF-8 bytes, modulo the number of
/// partitions. `offline`, `user` and `tick` change every conversation a user is in,
/// or the clock, and `stats` and `snapshot` are answered by each partition for its
/// own part: they go to every partition.
///
/// ```swift
/// Partition.of(Identifier("general"), among: 4)                       // 3
/// Partition.route(of: .tick, among: 4)                                // .every
/// Partition.route(of: .send(conv: Identifier("general"), user: Identifier("ann")), among: 4)   // .one(3)
/// ```
public enum Partition {
    /// Where a command goes.
    public enum Route: Sendable, Equatable {
        /// To this partition alone (0 ..< the number of partitions).
        case one(Int)
        /// To every partition.
        case every
    }

    /// The published test vectors: a conversation id, its FNV-1a hash, and its
    /// partition among 4. Every implementation of the rule should reproduce them.
    public static let testVectors: [(conv: String, hash: UInt32, partitionOfFour: Int)] = [
        ("", 0x811C_9DC5, 1), ("general", 0x24B9_216B, 3), ("dm:alice:bob", 0xE147_4CF1, 1), ("\u{E9}", 0x1E9D_E8C1, 1),
    ]

    /// FNV-1a, 32 bits, of `bytes`.
    @inlinable
    public static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return hash
    }

    /// The partition of the conversation `conv` among `count` partitions (at least 1;
    /// a smaller count is taken as 1).
    public static func of(_ conv: Identifier, among count: Int) -> Int {
        let hash = conv.withUnsafeBytes { Self.hash($0) }
        return Int(hash % UInt32(clamping: max(count, 1)))
    }

    /// The partition of the conversation whose id is `conv`, as ``of(_:among:)``.
    public static func of(_ conv: String, among count: Int) -> Int {
        Int(hash(conv.utf8) % UInt32(clamping: max(count, 1)))
    }

    /// Where `command` goes among `count` partitions.
    public static func route(of command: Command, among count: Int) -> Route {
        switch command {
        case .join(let conv, _, _, _, _, _), .type(let conv, _, _, _, _, _), .send(let conv, _, _), .leave(let conv, _),
             .remove(let conv, _, _), .open(let conv, _, _, _), .close(let conv, _), .query(let conv, _),
             .forget(let conv, _):
            return .one(of(conv, among: count))
        case .offline, .user, .tick, .stats, .snapshot:
            return .every
        }
    }
}

extension Partition {
    /// What a router needs to know of one input line: where it goes, and what of it
    /// the router checks.
    public struct LineRoute: Sendable, Equatable {
        /// Where the line goes; nil when it is no command (it then goes to partition
        /// 0, whose engine answers it with its error, as one typingd would).
        public var route: Route?
        /// Whether the line gives its own `at`.
        public var hasTime: Bool
        /// The command's id, when it is a string.
        public var stringID: String?
    }

    /// Routes one input line (without LF or trailing CR) among `count` partitions,
    /// decoding it as a shard's engine does (jansson, the protocol's checks, a
    /// manual clock): the router and the shards cannot disagree on what a line is.
    public static func route(line: UnsafeRawBufferPointer, among count: Int) -> LineRoute {
        let decoder = CommandDecoder(clock: .manual)
        guard let request = try? decoder.decode(line, number: 1) else {
            return LineRoute(route: nil, hasTime: false, stringID: nil)
        }
        var stringID: String? = nil
        if case .string(let id)? = request.id { stringID = id }
        return LineRoute(route: route(of: request.command, among: count), hasTime: request.at != nil, stringID: stringID)
    }
}
