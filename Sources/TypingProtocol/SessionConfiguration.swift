import TypingCore

/// Everything that shapes a session, from the command line.
public struct SessionConfiguration: Sendable, Equatable {
    /// The default `--max-line-bytes`: 1 MiB.
    public static let defaultMaxLineBytes = 1_048_576

    /// The engine's settings.
    public var engine: EngineConfiguration
    /// Where time comes from.
    public var clock: ClockMode
    /// The longest line accepted, CR included.
    public var maxLineBytes: Int
    /// Whether remaining streaks time out at the end of input.
    public var drain: Bool
    /// ``Session/feed(_:)`` returns early once this many bytes of output wait, so
    /// output stays bounded however much a chunk of input produces.
    public var outputLimit: Int = 1 << 18

    /// Creates a configuration; the defaults are the protocol's, but for the
    /// clock, which defaults to manual here (the daemon's default is real).
    public init(engine: EngineConfiguration = EngineConfiguration(), clock: ClockMode = .manual,
                maxLineBytes: Int = SessionConfiguration.defaultMaxLineBytes, drain: Bool = true) {
        self.engine = engine
        self.clock = clock
        self.maxLineBytes = maxLineBytes
        self.drain = drain
    }
}
