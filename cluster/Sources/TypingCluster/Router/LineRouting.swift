import TypingPartitioning
import TypingProtocol

/// Where one input line goes, and how it is stored: the router's rules, apart
/// from its I/O.
package struct LineRouting {
    package let partitions: Int
    /// Lines longer than this are refused (they would not fit a message).
    package let maxLine: Int
    /// Whether commands without `at` get the router's clock.
    package let stamp: Bool

    /// What became of a line.
    package enum Outcome: Equatable {
        /// Blank (spaces and tabs only): skipped.
        case blank
        /// Refused, with the reason for stderr.
        case refused(String)
        /// Stored in one partition, or in every one.
        case one(Int), every
    }

    /// Routes `line` (no LF, no trailing CR); `store(p, bytes)` stores it in
    /// partition p (the bytes are the line, stamped if it is to be).
    package func route(_ line: UnsafeRawBufferPointer, time: Int, store: (Int, UnsafeRawBufferPointer) -> Void)
        -> Outcome
    {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return .blank }
        if line.count > maxLine {
            return .refused(
                "a line of \(line.count) bytes (the cluster takes lines up to \(maxLine)): \(Self.preview(line))...")
        }
        let decision = Partition.route(line: line, among: partitions)
        if let id = decision.stringID, id.utf8.starts(with: "typingd:".utf8) {
            return .refused("a line whose id starts with \"typingd:\" (reserved for shards): \(Self.preview(line))")
        }
        guard let route = decision.route else {
            store(0, line) // no command: partition 0's engine answers it with its error
            return .one(0)
        }
        if stamp && !decision.hasTime, let stamped = Self.stamped(line, time: time) {
            stamped.withUnsafeBytes { bytes in
                switch route {
                case .one(let p): store(p, bytes)
                case .every: for p in 0..<partitions { store(p, bytes) }
                }
            }
        } else {
            switch route {
            case .one(let p): store(p, line)
            case .every: for p in 0..<partitions { store(p, line) }
            }
        }
        switch route {
        case .one(let p): return .one(p)
        case .every: return .every
        }
    }

    package init(partitions: Int, maxLine: Int, stamp: Bool) {
        self.partitions = partitions
        self.maxLine = maxLine
        self.stamp = stamp
    }

    /// `line`, a JSON object, with `"at":time` added before its closing brace (the
    /// spaces after it, jansson's: space, tab, CR, LF, are dropped); nil when it
    /// does not end with one.
    static func stamped(_ line: UnsafeRawBufferPointer, time: Int) -> [UInt8]? {
        guard let close = line.lastIndex(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D && $0 != 0x0A }),
            line[close] == 0x7D
        else { return nil }
        var out = [UInt8](UnsafeRawBufferPointer(rebasing: line[..<close]))
        out.append(contentsOf: ",\"at\":\(time)}".utf8)
        return out
    }

    static func preview(_ line: UnsafeRawBufferPointer) -> String {
        String(decoding: line.prefix(200), as: UTF8.self).debugDescription
    }
}
