import ArgumentParser
import TypingCluster
import TypingProtocol

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
        """
    )

    @Option(name: .customLong("of"), help: ArgumentHelp("The number of partitions.", valueName: "n"))
    var count: Int

    @Argument(help: ArgumentHelp("Conversation ids.", valueName: "conv"))
    var conversations: [String] = []

    func validate() throws {
        guard (1...4096).contains(count) else { throw ValidationError("--of must be from 1 to 4096, not \(count)") }
        guard !conversations.isEmpty else { throw ValidationError("give at least one conversation id") }
    }

    func run() throws {
        var output = ""
        for conv in conversations {
            output += "\(TypingProtocol.Partition.of(conv, among: count))\t\(conv)\n"
        }
        print(output, terminator: "")
    }
}
