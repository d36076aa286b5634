/// Which input a router's checkpoint belongs to: the input's first bytes (at most
/// ``limit``), kept as their length and FNV-1a 64 digest with the checkpoint. A
/// restart under the same name compares them with its stdin's first bytes before
/// it stores anything: the same input (a file that grew since included) resumes,
/// another one (or one shorter than those bytes) is refused.
///
/// Only bytes the router has passed are ever compared (the head kept is at most
/// the checkpoint's offset), so a pipe can be checked from the bytes it skips.
/// Two inputs that begin with the same ``limit`` bytes are taken for one: the
/// router also refuses a checkpoint offset that is not the start of a line of
/// stdin, or past its end.
public struct InputHead: Sendable, Equatable {
    /// The most bytes kept.
    public static let limit = 4096

    /// The input's bytes from its first, as far as seen (at most ``limit``).
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// Whether it holds all it keeps.
    public var isFull: Bool { bytes.count >= Self.limit }

    /// Takes what extends the head of `chunk`, the input's bytes from `position` on.
    public mutating func take(_ chunk: UnsafeRawBufferPointer, at position: Int) {
        let have = bytes.count
        guard have < Self.limit, position <= have, position + chunk.count > have else { return }
        let from = have - position
        let upTo = min(chunk.count, Self.limit - position)
        bytes.append(contentsOf: chunk[from..<upTo])
    }

    /// The length and digest to keep with a checkpoint at input byte `offset`:
    /// the bytes seen before it, at most ``limit``; nil when fewer are known.
    public func identity(before offset: Int) -> Identity? {
        let length = min(offset, Self.limit)
        guard length <= bytes.count else { return nil }
        return Identity(length: length, digest: Self.digest(bytes[0..<length]))
    }

    /// What a checkpoint keeps of its input.
    public struct Identity: Sendable, Equatable {
        public var length: Int
        public var digest: String
        public init(length: Int, digest: String) {
            self.length = length
            self.digest = digest
        }
    }

    /// Whether this input is the one of `kept`: false when it differs in those
    /// bytes or is shorter than them (nil: not known yet, fewer bytes seen).
    public func matches(_ kept: Identity) -> Bool {
        guard kept.length <= bytes.count else { return false }
        return Self.digest(bytes[0..<kept.length]) == kept.digest
    }

    /// FNV-1a 64 of `bytes`, 16 hex digits.
    public static func digest(_ bytes: ArraySlice<UInt8>) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let text = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }
}
