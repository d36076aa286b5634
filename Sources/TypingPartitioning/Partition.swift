import CJansson
import CJanssonArena
import TypingCore
import TypingProtocol

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
        ("", 0x811C_9DC5, 1), ("general", 0x24B9_216B, 3), ("dm:alice:bob", 0xE147_4CF1, 1), ("\u{E9}", 0x1E9D_E8C1, 1)
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
        case .join(let conv, _, _, _, _, _), .type(let conv, _, _, _, _, _, _), .send(let conv, _, _),
            .leave(let conv, _),
            .remove(let conv, _, _), .open(let conv, _, _, _, _), .close(let conv, _, _), .query(let conv, _),
            .forget(let conv, _), .restore(let conv, _, _, _, _):
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
        /// The line's `id`, when the line is a JSON object whose id is a string
        /// (a command or not).
        public var stringID: String?

        package init(route: Route?, hasTime: Bool, stringID: String?) {
            self.route = route
            self.hasTime = hasTime
            self.stringID = stringID
        }
    }

    /// Whether a command named `name` goes to the partition of its `conv` (else to
    /// every partition): the same split as ``route(of:among:)``, by name.
    public static func goesToItsConversation(_ name: Command.Name) -> Bool {
        switch name {
        case .join, .type, .send, .leave, .remove, .open, .close, .query, .forget, .restore: return true
        case .offline, .user, .tick, .stats, .snapshot: return false
        }
    }

    /// The names of ``goesToItsConversation(_:)``, as bytes.
    static let conversationCommandNames: [[UInt8]] = Command.Name.allCases.filter(goesToItsConversation).map {
        Array($0.rawValue.utf8)
    }

    /// Routes one input line (without LF or trailing CR) among `count` partitions:
    ///
    /// - a JSON object whose `cmd` names a command of one conversation and whose
    ///   `conv` is a string goes to that conversation's partition, whatever else it
    ///   holds: if the rest is wrong, the engine there answers with its error, as
    ///   one typingd would;
    /// - any other line is decoded as a shard's engine decodes it (jansson, the
    ///   protocol's checks, a manual clock): a command for every partition goes to
    ///   every partition, and a line that is no command to none (`route` nil).
    ///
    /// Most lines are read without jansson (`PlainLine`); the result is the same.
    public static func route(line: UnsafeRawBufferPointer, among count: Int) -> LineRoute {
        if let plain = PlainLine(line), let cmd = plain.cmd, let conv = plain.conv {
            let name = UnsafeRawBufferPointer(rebasing: line[cmd])
            if conversationCommandNames.contains(where: { $0.elementsEqual(name) }) {
                let id = plain.id.map { String(decoding: UnsafeRawBufferPointer(rebasing: line[$0]), as: UTF8.self) }
                return LineRoute(
                    route: .one(of(hash: hash(UnsafeRawBufferPointer(rebasing: line[conv])), among: count)),
                    hasTime: plain.hasAt, stringID: id)
            }
        }
        return decodedRoute(line: line, among: count)
    }

    /// ``route(line:among:)`` read by jansson alone (the quick reading is checked
    /// against it).
    package static func decodedRoute(line: UnsafeRawBufferPointer, among count: Int) -> LineRoute {
        let none = LineRoute(route: nil, hasTime: false, stringID: nil)
        guard let base = line.baseAddress, Bytes.firstIndex(of: 0, in: line) == nil else { return none }
        var error = json_error_t()
        cj_arena_begin()
        defer { cj_arena_end() }
        guard let root = json_loadb(base.assumingMemoryBound(to: CChar.self), line.count, cj_decode_flags(), &error)
        else {
            return none
        }
        defer { json_decref(root) }
        guard cj_is_object(root) != 0 else { return none }
        // The id, when it is a string, whether or not the rest is a command (the
        // router refuses the shards' own ids on any line).
        var stringID: String? = nil
        if let id = json_object_get(root, "id"), cj_is_string(id) != 0 {
            stringID = String(decoding: JSONValue.bytes(ofString: id), as: UTF8.self)
        }
        if let cmd = json_object_get(root, "cmd"), cj_is_string(cmd) != 0,
            let conv = json_object_get(root, "conv"), cj_is_string(conv) != 0
        {
            let name = JSONValue.bytes(ofString: cmd)
            if conversationCommandNames.contains(where: { $0.elementsEqual(name) }) {
                return LineRoute(
                    route: .one(of(hash: hash(JSONValue.bytes(ofString: conv)), among: count)),
                    hasTime: json_object_get(root, "at") != nil, stringID: stringID)
            }
        }
        let decoder = CommandDecoder(clock: .manual)
        guard let request = try? decoder.decode(line, number: 1) else {
            return LineRoute(route: nil, hasTime: false, stringID: stringID)
        }
        return LineRoute(
            route: route(of: request.command, among: count), hasTime: request.at != nil, stringID: stringID)
    }

    /// The partition of a conversation whose id hashes to `hash`.
    static func of(hash: UInt32, among count: Int) -> Int {
        Int(hash % UInt32(clamping: max(count, 1)))
    }
}
