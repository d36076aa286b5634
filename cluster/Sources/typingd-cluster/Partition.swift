import ArgumentParser
import TypingCluster
import TypingProtocol
#if canImport(Glibc)
import Glibc
#endif

/// `typingd-cluster partition --of N CONV...`: the partition of each conversation,
/// by the one rule the router, the shards and the gateways use.
struct Partition: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the partition of each conversation (FNV-1a of its id, modulo N).",
        discussion: """
        One line per conversation: the partition, a tab, the id. The same rule routes \
        every command: a conversation's commands go to its partition; offline, user, \
        tick, stats and snapshot go to every partition.

        Test vectors (N = 4): "" → 1, "general" → 3, "dm:alice:bob" → 1, "é" → 1.

        With --lines, reads command lines on stdin instead and prints, for each, where \
        the router sends it: the partition, `*` for every partition, `-` for a blank line \
        (skipped), `x` for a line it refuses (an id starting with "typingd:"). A line \
        that is no command goes to 0. Test harnesses ask this, so that no copy of the \
        rule exists outside the code that routes.
        """
    )

    @Option(name: .customLong("of"), help: ArgumentHelp("The number of partitions.", valueName: "n"))
    var count: Int

    @Flag(help: "Route the command lines of stdin, one answer a line.")
    var lines = false

    @Argument(help: ArgumentHelp("Conversation ids.", valueName: "conv"))
    var conversations: [String] = []

    func validate() throws {
        guard (1...4096).contains(count) else { throw ValidationError("--of must be from 1 to 4096, not \(count)") }
        if lines && !conversations.isEmpty { throw ValidationError("--lines reads stdin: give no conversation id") }
        guard lines || !conversations.isEmpty else { throw ValidationError("give at least one conversation id (or --lines)") }
    }

    func run() throws {
        if lines {
            try routeLines()
            return
        }
        var output = ""
        for conv in conversations {
            output += "\(TypingProtocol.Partition.of(conv, among: count))\t\(conv)\n"
        }
        print(output, terminator: "")
    }
}

extension Partition {
    /// `--lines`: each stdin line's route, as the router decides it.
    func routeLines() throws {
        let rules = LineRouting(partitions: count, maxLine: Int.max, stamp: false)
        var input: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
            if got < 0 { if errno == EINTR { continue }; throw ValidationError("reading stdin: \(String(cString: strerror(errno)))") }
            if got == 0 { break }
            input += chunk[0..<got]
        }
        var output: [UInt8] = []
        var start = 0
        while start < input.count {
            var end = input[start...].firstIndex(of: 0x0A) ?? input.count
            let next = end + 1
            if end > start && input[end - 1] == 0x0D { end -= 1 }
            let outcome = input[start..<end].withUnsafeBytes { rules.route($0, time: 0) { _, _ in } }
            switch outcome {
            case .blank: output += Array("-\n".utf8)
            case .refused: output += Array("x\n".utf8)
            case .every: output += Array("*\n".utf8)
            case .one(let p): output += Array("\(p)\n".utf8)
            }
            start = next
        }
        output.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let wrote = Glibc.write(1, bytes.baseAddress! + offset, bytes.count - offset)
                if wrote <= 0 { if errno == EINTR { continue }; return }
                offset += wrote
            }
        }
    }
}
