import Testing
import TypingCluster

/// The router's send rule: a line after a quiet moment goes at once, lines read
/// while a round is in flight wait for it, rounds are at least a linger apart.
@Suite struct SendRuleTests {
    let rule = SendRule(linger: 0.020, batchLines: 100)

    /// Whether `decision` is to wait until `moment` (to a nanosecond: the times are sums).
    func waits(_ decision: SendRule.Decision, until moment: Double) -> Bool {
        if case .waitUntil(let due) = decision { return abs(due - moment) < 1e-9 }
        return false
    }

    @Test func aKeystrokeAfterAQuietMomentGoesAtOnce() {
        // Never sent, or the last round long ago: nothing to wait for.
        #expect(rule.decide(.init(waiting: 1, fullest: 1), now: 5) == .sendNow)
        #expect(rule.decide(.init(waiting: 1, fullest: 1, lastRound: 4.5), now: 5) == .sendNow)
        // Exactly a linger after the last round began.
        #expect(rule.decide(.init(waiting: 1, fullest: 1, lastRound: 4.980), now: 5) == .sendNow)
    }

    @Test func linesReadWhileARoundIsInFlightWaitForIt() {
        // In flight: wait, however long ago the round began (a completion wakes the senders).
        #expect(waits(rule.decide(.init(waiting: 3, fullest: 2, inFlight: 1, lastRound: 4.990), now: 5), until: 5.490))
        #expect(waits(rule.decide(.init(waiting: 3, fullest: 2, inFlight: 2, lastRound: 4.900), now: 5), until: 5.400))
    }

    @Test func roundsAreAtLeastALingerApart() {
        // Nothing in flight, but the last round began 5 ms ago: the lines gather until 15 ms from now.
        #expect(waits(rule.decide(.init(waiting: 7, fullest: 7, lastRound: 4.995), now: 5), until: 5.015))
    }

    @Test func aFullBatchTheEndAndNoLingerGoAtOnce() {
        #expect(rule.decide(.init(waiting: 100, fullest: 100, inFlight: 1, lastRound: 4.999), now: 5) == .sendNow)
        #expect(
            rule.decide(.init(waiting: 1, fullest: 1, inFlight: 1, lastRound: 4.999, draining: true), now: 5)
                == .sendNow)
        let eager = SendRule(linger: 0, batchLines: 100)
        #expect(eager.decide(.init(waiting: 1, fullest: 1, inFlight: 1, lastRound: 4.999), now: 5) == .sendNow)
    }

    @Test func aStuckRoundHoldsTheOthersBackOnlySoLong() {
        // A partition waiting out an outage since 4.0: the others go in a round of their own.
        #expect(rule.decide(.init(waiting: 5, fullest: 5, inFlight: 1, lastRound: 4.0), now: 5) == .sendNow)
    }

    @Test func nothingWaitingSleepsUntilTheLingerEnds() {
        // Lines read before the linger ends wake nobody, so the senders look then.
        #expect(waits(rule.decide(.init(lastRound: 4.990), now: 5), until: 5.010))
        // After it, lines wake the senders (the reader asks the same rule).
        #expect(rule.decide(.init(lastRound: 4.0), now: 5) == .idle)
        #expect(rule.decide(.init(lastRound: 4.990, draining: true), now: 5) == .idle)
    }
}
