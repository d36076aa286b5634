import NatsClient
#if canImport(Glibc)
import Glibc
#endif

/// What every role (route, shard, gateway) checks before it starts: that the
/// servers have JetStream, that the cluster is set up (`ctl setup` made stream
/// ``Names/stream``), and that it was set up for the role's PARTITIONS. A
/// timeout or a cluster without a leader is waited through (an outage); an
/// answer that says "no JetStream" or "no such stream" for ``patience`` seconds
/// in a row, or another partition count, is a mistake to tell the operator.
public enum ClusterCheck {
    /// The exit status of a role that cannot run on this cluster (EX_CONFIG).
    public static let exitStatus: Int32 = 78

    /// How long a "no JetStream" or "not set up" answer must last before it is
    /// believed (a node just started, a setup under way).
    public static let patience = 3.0

    /// Why a role cannot run here.
    public enum Problem: Error, CustomStringConvertible, Equatable, Sendable {
        case noJetStream(server: String)
        case notSetUp
        case partitions(stored: Int, given: Int)

        public var description: String {
            switch self {
            case .noJetStream(let server):
                return "the server at \(server) has no JetStream: start nats-server with -js (or a jetstream block "
                    + "in its configuration), then run `typingd-cluster ctl setup`"
            case .notSetUp:
                return
                    "the cluster is not set up: JetStream has no stream \(Names.stream). Run `typingd-cluster ctl setup` first"
            case .partitions(let stored, let given):
                return "the cluster was set up with PARTITIONS=\(stored) (stream \(Names.stream)), this role was given "
                    + "PARTITIONS=\(given): every role must use the cluster's \(stored) (--partitions, PARTITIONS, --config); "
                    + "to change the count, stop every role and run `typingd-cluster ctl wipe` (it deletes every command stored)"
            }
        }
    }

    /// The command stream's description, which holds the cluster's partition count.
    public static func streamDescription(partitions: Int) -> String {
        "typingd commands; PARTITIONS=\(partitions)"
    }

    /// The partition count a description holds; nil when it holds none (a stream
    /// made before the count was kept).
    public static func storedPartitions(_ description: String?) -> Int? {
        guard let description, let range = description.range(of: "PARTITIONS=") else { return nil }
        let digits = description[range.upperBound...].prefix { $0.isASCII && $0.isNumber }
        return Int(digits)
    }

    /// What one look at the command stream says.
    public enum Verdict: Equatable, Sendable {
        /// Set up, with these partitions (or none kept).
        case ready
        /// A mistake (believed once it lasts ``patience`` seconds, except a
        /// partition count, believed at once).
        case problem(Problem)
        /// Nothing to say yet: wait (an outage, an election).
        case wait(String)
    }

    /// The verdict of one stream lookup's outcome, for `partitions`.
    public static func verdict(_ outcome: Result<JetStream.StreamInfo, NatsError>, partitions: Int, server: String)
        -> Verdict
    {
        switch outcome {
        case .success(let info):
            if let stored = storedPartitions(info.description), stored != partitions {
                return .problem(.partitions(stored: stored, given: partitions))
            }
            return .ready
        case .failure(let error):
            if error.isNoResponders { return .problem(.noJetStream(server: server)) }
            if error.isNotFound { return .problem(.notSetUp) }
            return .wait(error.description)
        }
    }

    /// Looks until the cluster is ready for a role with `partitions`: the stream's
    /// info; throws the problem once it is sure of one. nil when `stopping` says so
    /// meanwhile. `log` is told what it waits for every 5 s.
    public static func verify(
        _ js: JetStream, partitions: Int, stopping: () -> Bool = { false },
        log: (String) -> Void
    ) throws(Problem) -> JetStream.StreamInfo? {
        let since = ClusterControl.now()
        var logged = since
        var problemSince: Double? = nil
        while true {
            if stopping() { return nil }
            let outcome = Result { () throws(NatsError) -> JetStream.StreamInfo in try js.streamInfo(Names.stream) }
            let now = ClusterControl.now()
            switch verdict(outcome, partitions: partitions, server: js.connection.connectedURL ?? "?") {
            case .ready:
                return try? outcome.get()
            case .problem(let problem):
                if case .partitions = problem { throw problem }
                let first = problemSince ?? now
                problemSince = first
                if now - first >= patience { throw problem }
            case .wait(let why):
                problemSince = nil
                if now - logged >= 5 {
                    log(
                        "waiting for the cluster: stream \(Names.stream) not answering for \(Int(now - since)) s (\(why))"
                    )
                    logged = now
                }
            }
            pause(.milliseconds(250))
        }
    }
}
