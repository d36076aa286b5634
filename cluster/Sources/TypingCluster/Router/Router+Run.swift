import Foundation
import NatsClient

extension Router {
    static let chunk = 1 << 17
    static let notALineStart =
        "the checkpoint's byte is not the start of a line of stdin, so this is not the input "
        + "this --name read: give a new input a new --name (or --from-start to send this one whole)"

    /// Calls `body` until it succeeds (back-off, a log line every 5 s); nil once
    /// the router is told to stop meanwhile.
    func untilDone<T>(_ what: String, _ body: () throws -> T) -> T? {
        var delay = 0.05
        let since = monotonicSeconds()
        var logged = since
        while true {
            lock.lock(); let stop = stopping; lock.unlock()
            if stop { return nil }
            do {
                return try body()
            } catch {
                let now = monotonicSeconds()
                if now - logged >= 5 {
                    log("waiting for the cluster: \(what) for \(Int(now - since)) s (\(error))")
                    logged = now
                }
                pause(.seconds(delay))
                delay = min(delay * 2, 2)
            }
        }
    }

    /// A bucket, made when missing with as many replicas as the cluster has (up to 3).
    func bucket(_ name: String, ttl: Int64) throws -> KeyValue {
        let opened = Result { () throws(NatsError) -> KeyValue in try KeyValue.open(name, in: js) }
        switch opened {
        case .success(let bucket):
            return bucket
        case .failure(let error):
            if !error.isNotFound { throw error }
        }
        var last: NatsError? = nil
        for replicas in [3, 2, 1] where replicas <= max(1, min(3, configuration.replicas)) {
            let made = Result { () throws(NatsError) -> KeyValue in
                try KeyValue.create(KeyValue.Config(bucket: name, ttl: ttl, replicas: replicas), in: js)
            }
            switch made {
            case .success(let bucket): return bucket
            case .failure(let error): last = error
            }
        }
        throw last ?? NatsError.invalid("no replicas to try")
    }

    /// Stops reading; the lines read are stored, then the checkpoint written. A
    /// second call exits at once (status 1).
    public func stop(signal name: String) {
        lock.lock()
        if stopping {
            advance()
            log(
                "second \(name): exiting before everything read is stored: stored through byte \(storedOffset), "
                    + "checkpointed through byte \(checkpointed); a restart with --name \(configuration.name) resumes at the "
                    + "checkpoint and re-sends lines the dedup ids and the shards then drop")
            exit(1)
        }
        stopping = true
        stopSignal = name
        log("\(name): stopped reading at byte \(readOffset); waiting until all of it is stored")
        lock.broadcast()
        lock.unlock()
    }

    /// Runs until the input ends (or ``stop(signal:)``), every line read stored:
    /// the exit status.
    public func run(input fd: Int32 = 0) -> Int32 {
        let checked: JetStream.StreamInfo?
        do {
            checked = try ClusterCheck.verify(
                js, partitions: configuration.partitions,
                stopping: { [self] in
                    lock.lock(); defer { lock.unlock() }
                    return stopping
                }, log: { [self] in log($0) })
        } catch {
            log("\(configuration.name): \(error)")
            return ClusterCheck.exitStatus
        }
        guard let info = checked else { return 0 }
        streamCreated = info.created
        guard
            let checkpointBucket = untilDone(
                "bucket \(Names.routerBucket)", { try bucket(Names.routerBucket, ttl: 0) }),
            let nameBucket = untilDone(
                "bucket \(Names.routerNameBucket)", { try bucket(Names.routerNameBucket, ttl: Names.routerNameTTL) })
        else { return 0 }
        checkpoints = checkpointBucket
        // The name first: nothing is read or routed by a router that does not hold it.
        let outcome: Result<NameFence, RouterFailure>? = untilDone("taking --name \(configuration.name)") {
            do {
                return .success(
                    try NameFence.take(nameBucket, name: configuration.name, ttl: Double(Names.routerNameTTL) / 1000))
            } catch let failure as RouterFailure {
                return .failure(failure)
            }
        }
        let fence: NameFence
        switch outcome {
        case nil:
            return 0
        case .failure(let failure)?:
            log(failure.description)
            return failure.exitStatus
        case .success(let held)?:
            fence = held
        }
        self.fence = fence
        Thread.detachNewThread { fence.keep() }
        defer { fence.release() }

        var offset = configuration.inputOffset, lines = 0
        var counts = [Int](repeating: 0, count: configuration.partitions)
        var kept: InputHead.Identity? = nil
        if !configuration.fromStart {
            do {
                if let resumed = try loadCheckpoint() {
                    if configuration.newInput {
                        counts = resumed.counts
                        log(
                            "\(configuration.name): a new input (--new-input): its lines are numbered on after the \(resumed.counts.reduce(0, +)) "
                                + "this name sent before (its old input's checkpoint, byte \(resumed.offset), is left behind)"
                        )
                    } else {
                        (offset, lines, counts, kept) = resumed
                    }
                }
            } catch let failure as RouterFailure {
                log(failure.description)
                return failure.exitStatus
            } catch {
                return 0
            }
        }
        // Stdin at the checkpoint's byte, the input's identity checked: before a
        // line is stored or the checkpoint written again.
        let tail: Bool
        do {
            tail = try position(fd, skip: offset - configuration.inputOffset, kept: kept, lines: lines)
        } catch let failure as RouterFailure {
            log("\(configuration.name): \(failure)")
            return failure.exitStatus
        } catch {
            log("\(configuration.name): reading stdin: \(error)")
            return 1
        }
        keptIdentity = kept
        lock.lock()
        readOffset = offset; storedOffset = offset; checkpointed = offset
        readLines = lines; storedLines = lines; storedCounts = counts
        parts = (0..<configuration.partitions).map {
            Part(index: $0, subject: Names.commandSubject($0), routed: counts[$0], stored: counts[$0])
        }
        lock.unlock()

        let statsSubscription = try? connection.subscribe(Names.routerStatsSubject(configuration.name))
        if let statsSubscription {
            Thread.detachNewThread { [self] in
                while true {
                    guard let request = try? statsSubscription.next(timeout: 1000) else { continue }
                    answerStats(request)
                }
            }
        }
        Thread.detachNewThread { [self] in
            while true {
                pause(configuration.checkpointEvery)
                save(final: false)
            }
        }
        let senderCount = min(configuration.partitions, 8)
        let finished = DispatchGroup()
        for k in 0..<senderCount {
            let mine = Array(stride(from: k, to: configuration.partitions, by: senderCount))
            finished.enter()
            Thread.detachNewThread { [self] in
                send(mine)
                finished.leave()
            }
        }
        lock.lock(); state = "reading"; lock.unlock()
        log("\(configuration.name): connected to \(connection.connectedURL ?? "no server yet")")
        log(
            "\(configuration.name): reading at byte \(offset) (input line \(lines + 1))\(offset > configuration.inputOffset || lines > 0 ? ", from its checkpoint (--from-start ignores it)" : "")"
        )
        var status: Int32 = 0
        do {
            try read(fd, skip: offset - configuration.inputOffset, tail: tail)
        } catch let failure as RouterFailure {
            log("\(configuration.name): \(failure)")
            status = failure.exitStatus
        } catch {
            log("\(configuration.name): reading stdin: \(error)")
            status = 1
        }
        lock.lock()
        readingDone = true
        state = "draining"
        lock.broadcast()
        lock.unlock()
        finished.wait()
        save(final: true)
        lock.lock()
        state = "stopped"
        let seconds = monotonicSeconds() - started
        let read = readLines - lines
        let messages = parts.reduce(0) { $0 + $1.messages }
        let ending = stopping ? "\(stopSignal) " : "end of input: "
        // One decimal: a paced run's 2 lines/s over 8.51 s is 1.997, not 1.
        let rate = seconds > 0 ? Double(read) / seconds : 0
        let summary =
            "\(read) lines in \(String(format: "%.2f", seconds)) s (\(String(format: "%.1f", rate)) lines/s), "
            + "\(messages) messages, \(retries) retries\(refused > 0 ? "; \(refused) lines refused" : "")"
        let position =
            "\(ending)stored through byte \(storedOffset) (\(storedLines) lines); a restart with --name \(configuration.name) resumes there"
        lock.unlock()
        log(summary)
        log(position)
        return status
    }

    /// (offset, input lines, lines per partition, what it kept of its input) to
    /// resume at; nil for none.
    func loadCheckpoint() throws -> (offset: Int, lines: Int, counts: [Int], identity: InputHead.Identity?)? {
        guard let bucket = checkpoints else { return nil }
        let read: [KeyValue.Entry]? = untilDone("reading the checkpoint") { () throws -> [KeyValue.Entry] in
            try bucket.get(configuration.name).map { [$0] } ?? []
        }
        guard let found = read else { throw CancellationError() }
        guard let entry = found.first else { return nil }
        guard let object = try? JSONSerialization.jsonObject(with: Data(entry.value)) as? [String: Any],
            let offset = (object["offset"] as? NSNumber)?.intValue,
            let counts = (object["lines"] as? [NSNumber])?.map(\.intValue)
        else {
            log(
                "checkpoint \(configuration.name.debugDescription) of bucket \(Names.routerBucket) is not one (ignored)"
            )
            return nil
        }
        if (object["stream_created"] as? NSNumber)?.int64Value != streamCreated {
            log(
                "checkpoint of \(configuration.name) (byte \(offset)) is from an earlier stream \(Names.stream), made anew since: starting from the input's beginning"
            )
            return nil
        }
        if counts.count != configuration.partitions {
            throw RouterFailure.checkpoint(
                "the checkpoint of \(configuration.name) is for \(counts.count) partitions, not \(configuration.partitions): its line numbers would not fit. Give the same --partitions, or a new --name (a new input)"
            )
        }
        var identity: InputHead.Identity? = nil
        if let length = (object["input_head_bytes"] as? NSNumber)?.intValue,
            let digest = object["input_head_fnv64"] as? String
        {
            identity = InputHead.Identity(length: length, digest: digest)
        }
        if configuration.newInput { return (offset, 0, counts, identity) }
        if offset < configuration.inputOffset {
            throw RouterFailure.input(
                "the checkpoint of \(configuration.name) is at byte \(offset), before stdin's start (--input-offset \(configuration.inputOffset)): the lines in between were never stored. Give stdin from byte \(offset) (or --from-start)"
            )
        }
        return (offset, (object["input_lines"] as? NSNumber)?.intValue ?? 0, counts, identity)
    }

}
