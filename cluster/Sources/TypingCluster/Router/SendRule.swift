/// When the router's senders send: in rounds. A round takes the waiting lines of
/// every partition with nothing in flight, and their messages go out together
/// (JetStream's leader replicates messages that arrive together in one append,
/// so a round of four costs the servers about what two single messages cost).
///
/// - A line that arrives while nothing is in flight and the last round began at
///   least `linger` ago goes at once: a keystroke after a quiet moment waits for
///   nothing.
/// - While a round is in flight, lines wait for it (they share the next round),
///   and rounds begin at most one `linger` apart: under load a partition gets one
///   message per round, so messages a second are at most partitions / linger,
///   whatever the rate of lines.
/// - A partition with a full batch (`batchLines`), and the end of the input (or
///   a stop), go at once; so does everything when `linger` is 0.
/// - A round still in flight `stuckAfter` after it began (a partition waiting out
///   an outage) no longer holds the others back: they go in rounds of their own.
package struct SendRule: Sendable, Equatable {
    /// Seconds between the beginnings of two rounds, at least.
    package var linger: Double
    /// Lines a message holds at most.
    package var batchLines: Int
    /// Seconds a round in flight holds the next one back, at most.
    package var stuckAfter = 0.5

    package init(linger: Double, batchLines: Int, stuckAfter: Double = 0.5) {
        self.linger = linger
        self.batchLines = batchLines
        self.stuckAfter = stuckAfter
    }

    /// What the senders see.
    package struct State: Sendable, Equatable {
        /// Lines waiting in partitions with nothing in flight.
        package var waiting = 0
        /// The most lines waiting in one such partition.
        package var fullest = 0
        /// Partitions with a message in flight.
        package var inFlight = 0
        /// When the last round began (monotonic seconds; -infinity: never).
        package var lastRound = -Double.infinity
        /// The input ended or the router stops: everything goes now.
        package var draining = false

        package init(
            waiting: Int = 0, fullest: Int = 0, inFlight: Int = 0, lastRound: Double = -Double.infinity,
            draining: Bool = false
        ) {
            self.waiting = waiting
            self.fullest = fullest
            self.inFlight = inFlight
            self.lastRound = lastRound
            self.draining = draining
        }
    }

    package enum Decision: Sendable, Equatable {
        /// Begin a round now.
        case sendNow
        /// Nothing to send before this moment (monotonic seconds) unless woken
        /// (a message stored, a full batch): look again then.
        case waitUntil(Double)
        /// Nothing waits, and lines read now would go at once: sleep until the
        /// reader wakes the senders.
        case idle
    }

    package func decide(_ state: State, now: Double) -> Decision {
        let due = state.lastRound + linger
        if state.waiting == 0 {
            // Lines read before `due` wake nobody (the reader asks this rule too): look then.
            return !state.draining && due > now ? .waitUntil(due) : .idle
        }
        if state.draining || linger <= 0 || state.fullest >= batchLines { return .sendNow }
        if state.inFlight > 0 {
            // Batch while a round is out; a stuck one holds the rest back only so long.
            let release = max(due, state.lastRound + stuckAfter)
            return now >= release ? .sendNow : .waitUntil(release)
        }
        return now >= due ? .sendNow : .waitUntil(due)
    }
}
