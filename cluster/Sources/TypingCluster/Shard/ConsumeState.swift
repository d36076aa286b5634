/// The shard's consuming rules, without any I/O: which stream sequence is applied
/// how, when a run of messages is published as one entry, when a gap is filled
/// from the stream, when the consumer is looked at or made anew. Each step takes
/// what happened (a delivery, a pull, a look at the stream) and returns the
/// ``ConsumeAction``s the shard's loop performs, in order.
///
/// - A message at or below ``written`` is already applied (delivered again, or
///   taken from the stream): nothing is done (the fetch's ack covers it).
/// - A jump in the consumer's sequence past the next stream sequence means a lost
///   delivery: the run so far is published, the gap filled from the stream, then
///   the message placed.
/// - Up to ``published`` an earlier owner published the events: applied silently.
///   Up to ``catchUpTarget`` while catching up: applied into the backlog (each
///   screen's last indicator is published once at the end of the catch-up). After
///   that, consecutive messages of a fetch form a run published as one entry.
/// - 2 s without progress (and no failing pull): the stream is looked at; a stream
///   ahead at two looks in a row is a stalled consumer (filled from the stream);
///   3 stalls in a row, or a failing consumer that stops answering for 4 s, make
///   the consumer anew.
package struct ConsumeState {
    /// How a message is applied on its own.
    package enum Mode: Equatable, Sendable {
        /// Published by an earlier owner: applied, nothing published.
        case silent
        /// Part of the catch-up's backlog: screen changes kept for its end.
        case backlog
        /// Published as its own entry.
        case publish
    }

    /// Why the stream is read for messages the consumer did not deliver.
    package enum Gap: Equatable, Sendable {
        /// The consumer's sequence jumped: a delivery was lost before this message.
        case lostDelivery
        /// The consumer delivered nothing new for two looks while the stream held up to this.
        case stalled(last: UInt64)
    }

    /// What the loop does.
    package enum Action: Equatable, Sendable {
        /// Ends the catch-up: publishes the backlog, announces the owner.
        case finishCatchUp
        /// Takes a snapshot after ``written``.
        case takeSnapshot
        /// Reads the partition's last stored sequence, then calls ``looked(last:)``.
        case lookAtStream
        /// Counts a consumer stall.
        case countStall
        /// Applies the message alone, in this mode.
        case apply(UInt64, Mode)
        /// Feeds the message into the open run (`opens`: it is its first).
        case addToRun(UInt64, opens: Bool)
        /// Publishes the run's events as one entry, first...last.
        case endRun(first: UInt64, last: UInt64)
        /// Reads the partition's stored messages after ``written`` and before `before`,
        /// each through ``filled(_:)``, then calls ``gapFilled(now:)``.
        case fillGap(before: UInt64, Gap)
        /// Acknowledges the fetch's last message (ack all: every one before it too).
        case ackLast
        /// Logs the first failed pull.
        case logPullFailed
        /// Logs that a pull works again after failing this long.
        case logPullingAgain(after: Duration)
        /// Asks for the consumer's info, then calls ``probed(answered:now:)``.
        case probeConsumer
        /// Makes the consumer anew (for this reason), then calls ``remade(now:)``.
        case remakeConsumer(String)
        /// Waits this long before the next pull.
        case sleep(Duration)
        /// Ends this turn: the loop starts its next one without pulling.
        case nextTurn
    }

    /// A look at the stream this long after the last progress.
    package static let stallLook = Duration.seconds(2)
    /// A failing consumer is asked whether it is there after this long.
    package static let deadAfter = Duration.seconds(4)
    /// The pull's back-off: from this, doubling up to ``mostBackOff``.
    package static let firstBackOff = Duration.milliseconds(50)
    package static let mostBackOff = Duration.seconds(2)
    /// Stalls in a row that make the consumer anew.
    package static let stallsToRemake = 3

    /// The last stream sequence applied (written to the engine).
    package private(set) var written: UInt64
    /// Messages up to this were published by an earlier owner: applied silently.
    package let published: UInt64
    /// The partition's last message when the catch-up began.
    package let catchUpTarget: UInt64
    /// Whether the catch-up is over (its backlog published).
    package private(set) var caughtUp = false
    /// Messages between snapshots (0: never).
    package let snapshotEvery: Int
    /// Messages applied since the last snapshot.
    package private(set) var sinceSnapshot = 0
    /// Messages applied during the catch-up, and those of them applied silently.
    package private(set) var replayed = 0
    package private(set) var quiet = 0

    /// The consumer sequence of the last delivery (nil: none since the consumer was made).
    package private(set) var delivered: UInt64?
    /// The run being applied: its first and last stream sequences.
    package private(set) var run: (first: UInt64, last: UInt64)?
    /// What a gap being filled was for: a message waiting to be placed after it, or a stall.
    var filling: Filling?
    enum Filling { case message(UInt64), stall }

    // Progress and failures.
    var progressAt: ContinuousClock.Instant
    var progressSeq: UInt64
    var ahead = false
    package private(set) var stalls = 0
    var failingSince: ContinuousClock.Instant?
    var delay: Duration = ConsumeState.firstBackOff
    /// What a consumer probe was for.
    var probing: Probing?
    enum Probing { case failedPull, emptyPull(since: ContinuousClock.Instant) }

    package init(
        written: UInt64, published: UInt64, catchUpTarget: UInt64, snapshotEvery: Int, now: ContinuousClock.Instant,
        caughtUp: Bool = false
    ) {
        self.written = written
        self.caughtUp = caughtUp
        self.published = published
        self.catchUpTarget = catchUpTarget
        self.snapshotEvery = snapshotEvery
        progressAt = now
        progressSeq = written
    }

    // MARK: The loop's turn

    /// The start of a turn: the catch-up's end, a snapshot due, a look at the stream due.
    package mutating func beginTurn(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        if !caughtUp && written >= catchUpTarget {
            caughtUp = true
            actions.append(.finishCatchUp)
        }
        if sinceSnapshot >= snapshotEvery && snapshotEvery > 0 && caughtUp {
            sinceSnapshot = 0
            actions.append(.takeSnapshot)
        }
        if written != progressSeq {
            progressAt = now
            progressSeq = written
            ahead = false
            stalls = 0
        } else if now - progressAt >= Self.stallLook && failingSince == nil {
            progressAt = now
            actions.append(.lookAtStream)
        }
        return actions
    }

    /// The stream's last sequence for the partition (nil: not known): ahead at two
    /// looks in a row, the consumer stalled and the stream is read instead.
    package mutating func looked(last: UInt64?) -> [Action] {
        guard let last, last > written else {
            ahead = false
            return []
        }
        if !ahead {
            ahead = true
            return []
        }
        ahead = false
        filling = .stall
        return [.countStall, .fillGap(before: last + 1, .stalled(last: last))]
    }

    // MARK: Pulls

    /// A pull failed: the consumer is probed once it has failed for 4 s, else the
    /// next pull waits a back-off.
    package mutating func pullFailed(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        let since = failingSince ?? now
        if failingSince == nil {
            failingSince = now
            actions.append(.logPullFailed)
        }
        if now - since >= Self.deadAfter {
            probing = .failedPull
            return actions + [.probeConsumer]
        }
        return actions + [backOff(), .nextTurn]
    }

    mutating func backOff() -> Action {
        let wait = delay
        delay = min(delay * 2, Self.mostBackOff)
        return .sleep(wait)
    }

    /// A pull gave `count` messages. After a failure an empty pull proves nothing
    /// (the consumer's node may be gone, its requests answered by nobody): the
    /// consumer must answer.
    package mutating func pulled(count: Int, now: ContinuousClock.Instant) -> [Action] {
        guard let since = failingSince else { return count == 0 ? [.nextTurn] : [] }
        if count == 0 {
            if now - since < Self.deadAfter { return [.nextTurn] }
            probing = .emptyPull(since: since)
            return [.probeConsumer]
        }
        return recovered(since: since, now: now)
    }

    mutating func recovered(since: ContinuousClock.Instant, now: ContinuousClock.Instant) -> [Action] {
        failingSince = nil
        delay = Self.firstBackOff
        progressAt = now
        ahead = false
        return [.logPullingAgain(after: now - since)]
    }

    /// The consumer's info was asked for: a consumer that does not answer is made anew.
    package mutating func probed(answered: Bool, now: ContinuousClock.Instant) -> [Action] {
        let probe = probing
        probing = nil
        if !answered { return [.remakeConsumer("the consumer does not answer"), .nextTurn] }
        switch probe {
        case .emptyPull(let since)?:
            return recovered(since: since, now: now) + [.nextTurn]
        case .failedPull?, nil:
            return [backOff(), .nextTurn]
        }
    }

    /// The consumer was made anew (after `written`): its deliveries start over.
    package mutating func remade(now: ContinuousClock.Instant) {
        delivered = nil
        failingSince = nil
        delay = Self.firstBackOff
        progressAt = now
        ahead = false
    }

    // MARK: Messages

    /// A message the consumer delivered (stream sequence `seq`, consumer sequence `consumerSeq`).
    package mutating func delivered(seq: UInt64, consumerSeq: UInt64) -> [Action] {
        let jumped = delivered.map { consumerSeq != $0 &+ 1 } ?? true
        delivered = consumerSeq
        if seq > written && jumped && seq > written + 1 {
            filling = .message(seq)
            return endRun() + [.fillGap(before: seq, .lostDelivery)]
        }
        return place(seq)
    }

    /// A message read from the stream to fill a gap: applied alone.
    package mutating func filled(_ seq: UInt64) -> [Action] {
        [apply(seq)]
    }

    /// The gap is filled: the message that waited for it is placed, or a stall is counted.
    package mutating func gapFilled(now: ContinuousClock.Instant) -> [Action] {
        let was = filling
        filling = nil
        switch was {
        case .message(let seq)?:
            return place(seq)
        case .stall?:
            progressSeq = written
            stalls += 1
            if stalls >= Self.stallsToRemake {
                let why = "the consumer stalled \(stalls) times in a row"
                stalls = 0
                return [.remakeConsumer(why), .nextTurn]
            }
            return [.nextTurn]
        case nil:
            return []
        }
    }

    /// The fetch's messages are all placed: the run is published, the fetch acknowledged.
    package mutating func fetchEnded() -> [Action] {
        endRun() + [.ackLast]
    }

    mutating func place(_ seq: UInt64) -> [Action] {
        if seq <= written { return [] }
        let publishing = seq > published && (caughtUp || seq > catchUpTarget)
        if !publishing { return endRun() + [apply(seq)] }
        let opens = run == nil
        run = (run?.first ?? seq, seq)
        written = seq
        sinceSnapshot += 1
        return [.addToRun(seq, opens: opens)]
    }

    mutating func endRun() -> [Action] {
        guard let run else { return [] }
        self.run = nil
        written = run.last
        return [.endRun(first: run.first, last: run.last)]
    }

    mutating func apply(_ seq: UInt64) -> Action {
        let mode: Mode
        if seq <= published {
            mode = .silent
            quiet += 1
        } else if seq <= catchUpTarget && !caughtUp {
            mode = .backlog
        } else {
            mode = .publish
        }
        if !caughtUp { replayed += 1 }
        written = seq
        sinceSnapshot += 1
        return .apply(seq, mode)
    }
}
