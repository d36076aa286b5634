import TypingCore

/// The commands of the protocol and the fields each one reads.
enum CommandKind: String, CaseIterable {
    case join, type, send, leave, remove, offline, tick, query, stats

    /// The known commands, for messages.
    static let list = allCases.map(\.rawValue).joined(separator: ", ")

    /// Finds the command named by the UTF-8 bytes of a `cmd` string.
    init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 4, bytes.count <= 7 else { return nil }
        for kind in CommandKind.allCases where kind.rawValue.utf8.elementsEqual(bytes) {
            self = kind
            return
        }
        return nil
    }
}
