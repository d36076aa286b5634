import Testing
import TypingCluster

/// The shard's consuming rules without a server: deliveries that jump, deliveries
/// again, the catch-up's boundaries, gaps, stalls, failing pulls.
@Suite struct ConsumeStateTests {
    typealias Action = ConsumeState.Action
    static let t0 = ContinuousClock.now

    static func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int64(seconds * 1000)) }

    /// A state caught up at `written` (its first turn taken).
    static func caughtUp(at written: UInt64, snapshotEvery: Int = 0) -> ConsumeState {
        var state = ConsumeState(
            written: written, published: written, catchUpTarget: written, snapshotEvery: snapshotEvery, now: t0)
        #expect(state.beginTurn(now: t0) == [.finishCatchUp])
        return state
    }

    @Test func consecutiveDeliveriesFormOneRunPublishedAtTheFetchEnd() {
        var state = Self.caughtUp(at: 10)
        #expect(state.delivered(seq: 11, consumerSeq: 1) == [.addToRun(11, opens: true)])
        // Stream sequences skip other partitions' messages: the consumer's do not.
        #expect(state.delivered(seq: 15, consumerSeq: 2) == [.addToRun(15, opens: false)])
        #expect(state.fetchEnded() == [.endRun(first: 11, last: 15), .ackLast])
        #expect(state.written == 15)
        #expect(state.fetchEnded() == [.ackLast])
    }

    @Test func aJumpInTheConsumerSequenceFillsTheGapFromTheStreamFirst() {
        var state = Self.caughtUp(at: 10)
        #expect(state.delivered(seq: 11, consumerSeq: 1) == [.addToRun(11, opens: true)])
        #expect(
            state.delivered(seq: 20, consumerSeq: 4) == [
                .endRun(first: 11, last: 11), .fillGap(before: 20, .lostDelivery)
            ])
        #expect(state.filled(14) == [.apply(14, .publish)])
        #expect(state.filled(17) == [.apply(17, .publish)])
        #expect(state.written == 17)
        #expect(state.gapFilled(now: Self.t0) == [.addToRun(20, opens: true)])
        #expect(state.fetchEnded() == [.endRun(first: 20, last: 20), .ackLast])
        #expect(state.written == 20)
    }

    @Test func aJumpToTheNextStreamSequenceNeedsNoFill() {
        var state = Self.caughtUp(at: 10)
        // The first delivery of a consumer is a jump; the next sequence is no gap.
        #expect(state.delivered(seq: 11, consumerSeq: 7) == [.addToRun(11, opens: true)])
        #expect(state.delivered(seq: 12, consumerSeq: 9) == [.addToRun(12, opens: false)])
    }

    @Test func deliveriesAgainAreSkippedAndEndNoRun() {
        var state = Self.caughtUp(at: 10)
        #expect(state.delivered(seq: 11, consumerSeq: 1) == [.addToRun(11, opens: true)])
        #expect(state.delivered(seq: 12, consumerSeq: 2) == [.addToRun(12, opens: false)])
        // Delivered again after an ack wait: nothing applied twice, the run goes on.
        #expect(state.delivered(seq: 11, consumerSeq: 3) == [])
        #expect(state.delivered(seq: 12, consumerSeq: 4) == [])
        #expect(state.delivered(seq: 13, consumerSeq: 5) == [.addToRun(13, opens: false)])
        #expect(state.fetchEnded() == [.endRun(first: 11, last: 13), .ackLast])
    }

    @Test func theCatchUpAppliesSilentlyThenIntoTheBacklogThenPublishes() {
        // A snapshot after 5, an earlier owner published through 7, the stream held 10.
        var state = ConsumeState(written: 5, published: 7, catchUpTarget: 10, snapshotEvery: 0, now: Self.t0)
        #expect(state.beginTurn(now: Self.t0) == [])
        #expect(state.delivered(seq: 6, consumerSeq: 1) == [.apply(6, .silent)])
        #expect(state.delivered(seq: 7, consumerSeq: 2) == [.apply(7, .silent)])
        #expect(state.delivered(seq: 8, consumerSeq: 3) == [.apply(8, .backlog)])
        #expect(state.delivered(seq: 10, consumerSeq: 4) == [.apply(10, .backlog)])
        // Past the target: published even before the catch-up's end.
        #expect(state.delivered(seq: 11, consumerSeq: 5) == [.addToRun(11, opens: true)])
        #expect(state.fetchEnded() == [.endRun(first: 11, last: 11), .ackLast])
        #expect(state.replayed == 4)
        #expect(state.quiet == 2)
        #expect(!state.caughtUp)
        #expect(state.beginTurn(now: Self.t0) == [.finishCatchUp])
        #expect(state.caughtUp)
        #expect(state.beginTurn(now: Self.t0) == [])
    }

    @Test func aGapFilledDuringTheCatchUpKeepsEachMessagesMode() {
        var state = ConsumeState(written: 5, published: 7, catchUpTarget: 10, snapshotEvery: 0, now: Self.t0)
        #expect(state.delivered(seq: 12, consumerSeq: 1) == [.fillGap(before: 12, .lostDelivery)])
        #expect(state.filled(6) == [.apply(6, .silent)])
        #expect(state.filled(9) == [.apply(9, .backlog)])
        #expect(state.filled(11) == [.apply(11, .publish)])
        #expect(state.gapFilled(now: Self.t0) == [.addToRun(12, opens: true)])
    }

    @Test func aSnapshotIsDueEverySoManyMessagesOnceCaughtUp() {
        var state = Self.caughtUp(at: 0, snapshotEvery: 2)
        _ = state.delivered(seq: 1, consumerSeq: 1)
        _ = state.fetchEnded()
        #expect(state.beginTurn(now: Self.t0) == [])
        _ = state.delivered(seq: 2, consumerSeq: 2)
        _ = state.fetchEnded()
        #expect(state.beginTurn(now: Self.t0) == [.takeSnapshot])
        #expect(state.sinceSnapshot == 0)
    }

    @Test func aStreamAheadAtTwoLooksIsAStallFilledFromTheStream() {
        var state = Self.caughtUp(at: 10)
        #expect(state.beginTurn(now: Self.at(1.9)) == [])
        #expect(state.beginTurn(now: Self.at(2)) == [.lookAtStream])
        #expect(state.looked(last: 12) == []) // ahead once: maybe on its way
        #expect(state.beginTurn(now: Self.at(3)) == [])
        #expect(state.beginTurn(now: Self.at(4)) == [.lookAtStream])
        #expect(state.looked(last: 12) == [.countStall, .fillGap(before: 13, .stalled(last: 12))])
        #expect(state.filled(12) == [.apply(12, .publish)])
        #expect(state.gapFilled(now: Self.at(4)) == [.nextTurn])
        #expect(state.stalls == 1)
        // A look that finds the stream not ahead forgets the first look.
        #expect(state.beginTurn(now: Self.at(6)) == [.lookAtStream])
        #expect(state.looked(last: 12) == [])
        #expect(state.beginTurn(now: Self.at(8)) == [.lookAtStream])
        #expect(state.looked(last: nil) == [])
        #expect(state.beginTurn(now: Self.at(10)) == [.lookAtStream])
        #expect(state.looked(last: 13) == [])
    }

    @Test func threeStallsInARowRemakeTheConsumer() {
        var state = Self.caughtUp(at: 10)
        var now = 0.0
        for stall in 1...3 {
            now += 2
            #expect(state.beginTurn(now: Self.at(now)) == [.lookAtStream])
            #expect(state.looked(last: 20) == [])
            now += 2
            #expect(state.beginTurn(now: Self.at(now)) == [.lookAtStream])
            #expect(state.looked(last: 20) == [.countStall, .fillGap(before: 21, .stalled(last: 20))])
            // Nothing found to read: the stall still counts.
            #expect(
                state.gapFilled(now: Self.at(now))
                    == (stall < 3 ? [.nextTurn] : [.remakeConsumer("the consumer stalled 3 times in a row"), .nextTurn])
            )
        }
        #expect(state.stalls == 0)
        #expect(state.beginTurn(now: Self.at(now + 2)) == [.lookAtStream])
        #expect(state.looked(last: 20) == [])
        #expect(state.beginTurn(now: Self.at(now + 4)) == [.lookAtStream])
        _ = state.looked(last: 20)
        _ = state.filled(20)
        #expect(state.gapFilled(now: Self.at(now + 4)) == [.nextTurn])
        #expect(state.stalls == 1)
        // What the stream gave is no progress of the consumer's; a delivery is.
        #expect(state.beginTurn(now: Self.at(now + 5)) == [])
        #expect(state.stalls == 1)
        _ = state.delivered(seq: 21, consumerSeq: 1)
        _ = state.fetchEnded()
        #expect(state.beginTurn(now: Self.at(now + 5)) == [])
        #expect(state.stalls == 0)
    }

    @Test func failingPullsBackOffThenAConsumerThatDoesNotAnswerIsMadeAnew() {
        var state = Self.caughtUp(at: 10)
        #expect(state.pullFailed(now: Self.at(0)) == [.logPullFailed, .sleep(.milliseconds(50)), .nextTurn])
        #expect(state.pullFailed(now: Self.at(1)) == [.sleep(.milliseconds(100)), .nextTurn])
        // No look at the stream while pulls fail.
        #expect(state.beginTurn(now: Self.at(3)) == [])
        #expect(state.pullFailed(now: Self.at(3.9)) == [.sleep(.milliseconds(200)), .nextTurn])
        #expect(state.pullFailed(now: Self.at(4)) == [.probeConsumer])
        #expect(state.probed(answered: true, now: Self.at(4)) == [.sleep(.milliseconds(400)), .nextTurn])
        for _ in 0..<5 { _ = state.pullFailed(now: Self.at(3.9)) }
        #expect(state.pullFailed(now: Self.at(3.9)) == [.sleep(.seconds(2)), .nextTurn])
        #expect(state.pullFailed(now: Self.at(5)) == [.probeConsumer])
        #expect(
            state.probed(answered: false, now: Self.at(5)) == [
                .remakeConsumer("the consumer does not answer"), .nextTurn
            ])
        state.remade(now: Self.at(6))
        #expect(state.pullFailed(now: Self.at(6)) == [.logPullFailed, .sleep(.milliseconds(50)), .nextTurn])
    }

    @Test func anEmptyPullAfterAFailureProvesNothingUntilTheConsumerAnswers() {
        var state = Self.caughtUp(at: 10)
        _ = state.pullFailed(now: Self.at(0))
        #expect(state.pulled(count: 0, now: Self.at(1)) == [.nextTurn])
        #expect(state.pulled(count: 0, now: Self.at(4)) == [.probeConsumer])
        #expect(
            state.probed(answered: true, now: Self.at(4.5)) == [.logPullingAgain(after: .milliseconds(4500)), .nextTurn]
        )
        #expect(state.pulled(count: 0, now: Self.at(5)) == [.nextTurn])
        // Recovered: the next failure is a first one.
        #expect(state.pullFailed(now: Self.at(6)) == [.logPullFailed, .sleep(.milliseconds(50)), .nextTurn])
        #expect(state.pulled(count: 3, now: Self.at(7)) == [.logPullingAgain(after: .seconds(1))])
        #expect(state.pulled(count: 3, now: Self.at(7)) == [])
    }

    @Test func aRemadeConsumersFirstDeliveryIsAJump() {
        var state = Self.caughtUp(at: 10)
        _ = state.delivered(seq: 11, consumerSeq: 1)
        _ = state.fetchEnded()
        state.remade(now: Self.t0)
        // Consumer sequence 2 would follow 1, but the consumer is new: 15 is past a gap.
        #expect(state.delivered(seq: 15, consumerSeq: 2) == [.fillGap(before: 15, .lostDelivery)])
    }
}
