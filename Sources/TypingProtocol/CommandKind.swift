import Glibc
import TypingCore

/// The commands of the protocol and the fields each one reads.
enum CommandKind: String, CaseIterable {
    case join, type, send, leave, remove, offline, tick, query, stats

    /// The known commands, for messages.
    static let list = allCases.map(\.rawValue).joined(separator: ", ")

    /// Finds the command named by the UTF-8 bytes of a `cmd` string.
    init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 4, bytes.count <= 7, let base = bytes.baseAddress else { return nil }
        @inline(__always) func matches(_ name: StaticString) -> Bool {
            name.utf8CodeUnitCount == bytes.count && memcmp(name.utf8Start, base, bytes.count) == 0
        }
        switch bytes[0] {
        case UInt8(ascii: "t"):
            if matches("type") { self = .type } else if matches("tick") { self = .tick } else { return nil }
        case UInt8(ascii: "s"):
            if matches("send") { self = .send } else if matches("stats") { self = .stats } else { return nil }
        case UInt8(ascii: "j"):
            if matches("join") { self = .join } else { return nil }
        case UInt8(ascii: "l"):
            if matches("leave") { self = .leave } else { return nil }
        case UInt8(ascii: "r"):
            if matches("remove") { self = .remove } else { return nil }
        case UInt8(ascii: "o"):
            if matches("offline") { self = .offline } else { return nil }
        case UInt8(ascii: "q"):
            if matches("query") { self = .query } else { return nil }
        default:
            return nil
        }
    }
}
