import TypingCore

/// Everything that shapes a session, from the command line. The defaults are the
/// protocol's (but for the clock, see ``init(engine:clock:maxLineBytes:drain:output:)``).
public struct SessionConfiguration: Sendable, Equatable {
    /// Where time comes from.
    public enum Clock: String, Sendable, CaseIterable {
        /// Milliseconds since start on a monotonic clock; timeouts fire while idle.
        case real
        /// Time is what commands say (`at`); it starts at 0.
        case manual
    }

    /// The default `--max-line-bytes`: 1 MiB.
    public static let defaultMaxLineBytes = 1_048_576
    /// The values `maxLineBytes` may have.
    public static let maxLineBytesRange = 1...Int.max

    /// The engine's settings.
    public var engine: EngineConfiguration
    /// Where time comes from.
    public var clock: Clock
    /// The longest line accepted, CR included (at least 1).
    public var maxLineBytes: Int
    /// Whether remaining streaks time out at the end of input.
    public var drain: Bool
    /// When output is written to the sink.
    public var output: OutputPolicy
    /// Whether the session checks the engine's invariants after every line (slow:
    /// for tests and the fuzzer; builds without `TYPINGD_INTERNAL_CHECKS` have no
    /// checker, and ignore it).
    package var checksInvariants = false

    /// Creates a configuration; the defaults are the protocol's, but for the clock,
    /// which defaults to manual here (the daemon's default is real).
    public init(
        engine: EngineConfiguration = .defaults, clock: Clock = .manual,
        maxLineBytes: Int = SessionConfiguration.defaultMaxLineBytes, drain: Bool = true,
        output: OutputPolicy = OutputPolicy()
    ) {
        self.engine = engine
        self.clock = clock
        self.maxLineBytes = maxLineBytes
        self.drain = drain
        self.output = output
    }
}
