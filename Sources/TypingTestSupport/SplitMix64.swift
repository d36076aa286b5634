import Foundation

/// The tests' one random generator: SplitMix64, small, fast and the same on every
/// platform, so that a workload made from a seed is the same on every run.
///
/// A test with a fixed seed writes it (`SplitMix64(seed: 7)`). A test that wants a
/// new workload on every run takes ``TestSeed/run`` (``replayable(_:)``) and
/// carries the ``Trait/seedOnFailure`` trait: a failure then says the seed, and
/// `TYPINGD_TEST_SEED=SEED swift test --filter NAME` runs the same workload again.
///
/// ```swift
/// @Test(.seedOnFailure) func survivesAnyOrder() {
///     var random = SplitMix64.replayable()
///     let steps = (0..<100).map { _ in random.below(6) }
/// }
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The seed the generator started from.
    public let seed: UInt64
    /// The state: the seed plus the golden gamma once per number drawn.
    public private(set) var state: UInt64

    /// A generator that starts from `seed`.
    public init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    /// A generator from this run's seed (``TestSeed/run``), moved by `salt` so that
    /// the tests of one run draw different numbers; replayable with the seed.
    public static func replayable(_ salt: UInt64 = 0) -> SplitMix64 {
        SplitMix64(seed: TestSeed.run &+ salt &* 0x9E37_79B9_7F4A_7C15)
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A number in `0 ..< bound` (`bound` at least 1): the next number modulo
    /// `bound`, as the tests drew it before this type (so their workloads stay).
    public mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(max(bound, 1)))
    }
}

/// This run's seed for the tests that draw a new workload on every run: the value
/// of `TYPINGD_TEST_SEED` (decimal, or hexadecimal after `0x`) to replay a run, else
/// a random one, the same for the whole process.
public enum TestSeed {
    /// The name of the environment variable that replays a run.
    public static let variable = "TYPINGD_TEST_SEED"

    /// This run's seed.
    public static let run: UInt64 = {
        if let text = ProcessInfo.processInfo.environment[variable] {
            guard let seed = parse(text) else {
                fatalError(
                    "\(variable)=\(text) is no seed: give a decimal number, or hexadecimal after 0x, as a failure printed it"
                )
            }
            return seed
        }
        var system = SystemRandomNumberGenerator()
        return system.next()
    }()

    /// Whether the seed came from `TYPINGD_TEST_SEED`.
    public static var isReplay: Bool { ProcessInfo.processInfo.environment[variable] != nil }

    /// A seed written as a decimal number, or hexadecimal after `0x`; nil for
    /// anything else.
    public static func parse(_ text: String) -> UInt64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("0x") || trimmed.hasPrefix("0X") { return UInt64(trimmed.dropFirst(2), radix: 16) }
        return UInt64(trimmed)
    }

    /// What a failure says: the seed and how to run the same workload again.
    public static var replayHint: String {
        "seed \(run): replay with \(variable)=\(run) swift test --filter <this test>"
    }
}
