import ArgumentParser
import TypingCluster

/// `typingd-cluster`: typingd's engine, one owner per partition, on a NATS
/// JetStream cluster.
@main
struct TypingdCluster: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "typingd-cluster",
        abstract: "typingd on a NATS JetStream cluster: route commands, own partitions, serve viewers.",
        discussion: """
            Commands go in through `route`, which stores each line in the stream of its \
            conversation's partition. Each partition has one owner, a `shard`, which applies \
            its lines with typingd's engine in-process and publishes the events. A `gateway` \
            subscribes to the indicators of a set of viewers and keeps each one's screens \
            right, resyncing after any loss. `ctl` sets the cluster up and tells where it \
            stands; `partition` tells which partition a conversation is in.

            Every role reads the same settings: an option given, else the environment \
            (PARTITIONS=8), else the file given with --config, else the default.
            """,
        subcommands: [RouteCommand.self, ShardCommand.self, GatewayCommand.self, Ctl.self, Partition.self]
    )
}
