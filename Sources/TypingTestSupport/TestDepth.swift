import Foundation

/// How often the tests run the checks whose cost grows with the state (the
/// engine's invariant checker after a step of a random workload): after every
/// step when thorough, else after every ``sampleEvery``-th step, and always at a
/// workload's end. A broken structure stays broken, so a sampled check still
/// finds it, a few steps later; the thorough run names the very step.
///
/// Thorough under `TYPINGD_TEST_THOROUGH=1`, and under `CI=true` (as `.ci/run`
/// runs the tests) unless `TYPINGD_TEST_THOROUGH=0`. A developer's `swift test`
/// samples: the per-step checks were most of its time.
public enum TestDepth {
    /// The name of the environment variable that chooses.
    public static let variable = "TYPINGD_TEST_THOROUGH"

    /// The steps from one check to the next when sampling.
    public static let sampleEvery = 16

    /// Whether every step is checked.
    public static let isThorough: Bool = {
        let environment = ProcessInfo.processInfo.environment
        switch environment[variable] {
        case "1": return true
        case "0": return false
        default: return environment["CI"] == "true"
        }
    }()

    /// Whether step number `step` (counted from 1) is checked.
    public static func checks(step: Int) -> Bool {
        isThorough || step % sampleEvery == 0
    }
}
