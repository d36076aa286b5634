import Glibc

/// Milliseconds since the clock was made, on CLOCK_MONOTONIC (never jumps with
/// the wall clock).
struct MonotonicClock {
    /// The start, in nanoseconds.
    let start: Int

    /// A clock that reads 0 now.
    init() {
        start = MonotonicClock.nanoseconds()
    }

    /// Whole milliseconds since the start.
    var milliseconds: Int { (MonotonicClock.nanoseconds() - start) / 1_000_000 }

    /// How many milliseconds, rounded up, until `deadline` (ms since start), so a
    /// wait of that long never ends before the deadline; 0 if it has passed.
    func millisecondsUntil(_ deadline: Int) -> Int {
        let remaining = deadline.multipliedReportingOverflow(by: 1_000_000)
        guard !remaining.overflow else { return Int(Int32.max) }
        let left = remaining.partialValue - (MonotonicClock.nanoseconds() - start)
        return left <= 0 ? 0 : (left + 999_999) / 1_000_000
    }

    /// CLOCK_MONOTONIC in nanoseconds.
    static func nanoseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1_000_000_000 + now.tv_nsec
    }
}
