import ArgumentParser
import TypingCluster
import TypingPartitioning
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

            With --lines, reads command lines on stdin instead (framed as the router frames its \
            input, as typingd does: a byte order mark at the start skipped, one CR before LF \
            dropped) and prints, for each, where the router sends it: the partition, `*` for every partition, `-` for a blank line \
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
        guard lines || !conversations.isEmpty else {
            throw ValidationError("give at least one conversation id (or --lines)")
        }
    }

    func run() throws {
        if lines {
            try routeLines()
            return
        }
        var output = ""
        for conv in conversations {
            output += "\(TypingPartitioning.Partition.of(conv, among: count))\t\(conv)\n"
        }
        print(output, terminator: "")
    }
}

extension Partition {
    /// `--lines`: each stdin line's route, as the router decides it, stdin framed
    /// by the router's reading (``RouterInput``, typingd's framing).
    func routeLines() throws {
        var input = RouterInput(maxLineBytes: Int.max)
        var answers = Answers(rules: LineRouting(partitions: count, maxLine: Int.max, stamp: false))
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue };
                throw ValidationError("reading stdin: \(String(cString: strerror(errno)))")
            }
            if got == 0 { break }
            _ = try chunk.withUnsafeBytes { try input.feed(UnsafeRawBufferPointer(rebasing: $0[..<got]), to: &answers) }
            answers.flush()
        }
        input.finish(to: &answers)
        answers.flush()
    }

    /// Writes each line's route: the partition, `*`, `-` (blank) or `x` (refused).
    struct Answers: FrameHandler {
        let rules: LineRouting
        var output: [UInt8] = []

        var wantsPause: Bool { false }

        mutating func handleLine(_ line: UnsafeRawBufferPointer, number: Int) {
            switch rules.route(line, time: 0, store: { _, _ in }) {
            case .blank: output += Array("-\n".utf8)
            case .refused: output += Array("x\n".utf8)
            case .every: output += Array("*\n".utf8)
            case .one(let p): output += Array("\(p)\n".utf8)
            }
        }

        mutating func handleTooLong(number: Int, limit: Int) {
            output += Array("x\n".utf8)
        }

        /// Writes the answers so far to stdout.
        mutating func flush() {
            output.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return }
                var offset = 0
                while offset < bytes.count {
                    let wrote = Glibc.write(1, base + offset, bytes.count - offset)
                    if wrote <= 0 { if errno == EINTR { continue }; return }
                    offset += wrote
                }
            }
            output.removeAll(keepingCapacity: true)
        }
    }
}
