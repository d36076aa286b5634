import Foundation
import NatsClient
import TypingCore
import TypingProtocol

extension Shard {
    // MARK: Applying

    /// Feeds complete lines (each ending in LF) to the engine: every line is
    /// applied when it returns (the output's mode may change then). Many lines go
    /// through the parsing threads, as a flood of input does in typingd.
    @inline(__always)
    func feed(_ lines: [UInt8]) {
        lines.withUnsafeBytes { bytes in
            _ = pipeline.feed(bytes, stamp: nil, flooded: bytes.count >= Self.floodBytes)
            _ = pipeline.settle()
        }
    }

    /// A message at least this long is parsed on the parsing threads.
    static let floodBytes = 1 << 15

    /// The lines of a stored message to apply, or nil when it does not decode.
    func admit(_ headers: [String: String], _ body: [UInt8], seq: UInt64) -> [UInt8]? {
        do {
            let (lines, dropped) = try admission.admit(headers: headers, body: body, limit: max(maxPayload, 1 << 20))
            if dropped > 0 { count(.droppedLines, dropped) }
            for gap in admission.takeGaps() {
                count(.linesMissing, gap.count)
                log("a gap in a router's line numbers at seq \(seq): \(gap)")
            }
            return lines
        } catch {
            count(.undecodable)
            log("a message not applied (seq \(seq)): \(error)")
            return nil
        }
    }

    /// Applies one message alone in the mode the rules gave, and publishes its
    /// events (unless silent).
    func apply(_ seq: UInt64, _ mode: ConsumeState.Mode, headers: [String: String], body: [UInt8]) throws {
        let lines = admit(headers, body, seq: seq) ?? []
        switch mode {
        case .silent:
            output.mode = .suppress
            feed(lines)
            output.mode = .publish
            output.clearTouched()
        case .backlog:
            output.mode = .backlog
            setAuditPrefix(seq, backlog: true)
            // Each line's screen changes are applied around its own indicators
            // by the format, from the command the engine applied (ShardLines).
            feed(lines)
            output.mode = .publish
            try publishTouched(seq: seq, first: seq)
        case .publish:
            setAuditPrefix(seq, backlog: false)
            feed(lines)
            try publishTouched(seq: seq, first: seq)
        }
        shared.clock.store(pipeline.session.engine.now, ordering: .relaxed)
    }

    /// Feeds a message into the open run (its first sets the audit's placeholder).
    func addToRun(_ seq: UInt64, opens: Bool, headers: [String: String], body: [UInt8]) {
        if opens { setAuditPrefix(0, backlog: false) }
        if let lines = admit(headers, body, seq: seq) { feed(lines) }
    }

    /// Publishes the run's events as one entry, first...last.
    func endRun(first: UInt64, last: UInt64) throws {
        // The audit names each event by the run's last sequence, known only
        // now: a run ends early too (a jump filled from the stream), and its
        // lines must not keep the placeholder past their record's E line.
        if output.audit != nil { fixAuditPrefix(last) }
        try publishTouched(seq: last, first: first)
        shared.clock.store(pipeline.session.engine.now, ordering: .relaxed)
    }

    func setAuditPrefix(_ seq: UInt64, backlog: Bool) {
        if output.audit != nil { output.auditPrefix = Array("\(seq)\t\(backlog ? "B" : "P")\t".utf8) }
    }

    /// Publishes what the last entry wrote: one message per subject (split only
    /// past the max payload), headers epoch, partition and the last sequence
    /// applied; writes the audit; folds the resync table.
    func publishTouched(seq: UInt64, first: UInt64, audit: Bool = true) throws {
        guard let lease else { return }
        if !lease.held { fence("its time ran out before seq \(seq) was published") }
        let epoch = lease.epoch
        if audit, auditFD >= 0, output.audit != nil {
            output.audit!.append(contentsOf: "\(seq)\tE\t\(first):\(p):\(epoch)\n")
            output.audit!.withBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let count = Glibc.write(auditFD, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                    if count <= 0 { if errno == EINTR { continue }; break }
                    offset += count
                }
            }
            output.audit!.removeAll()
        }
        let headers = [
            Names.Header.epoch: String(epoch), Names.Header.partition: String(p), Names.Header.sequence: String(seq)
        ]
        let limit = max(1024, maxPayload - 4096)
        var messages = 0
        var events = 0
        var droppedEvents = 0
        for outgoing in output.touched {
            events += outgoing.lines
            outgoing.buffer.withBytes { bytes in
                var start = 0
                // The lines joined with "\n": the last LF is left out.
                let end = bytes.count - 1
                while start < end {
                    var stop = end
                    if stop - start > limit {
                        // The last line end within the limit (one line longer than it goes alone).
                        var cut = start + limit
                        while cut > start && bytes[cut] != 0x0A { cut -= 1 }
                        if cut == start { cut = bytes[(start + limit)...].firstIndex(of: 0x0A) ?? end }
                        stop = cut
                    }
                    let message = NatsMessage(
                        subject: outgoing.subject, headers: headers,
                        data: Array(UnsafeRawBufferPointer(rebasing: bytes[start..<stop])))
                    do {
                        try connection.publish(message)
                        messages += 1
                    } catch {
                        var lines = 1
                        for byte in bytes[start..<stop] where byte == 0x0A { lines += 1 }
                        droppedEvents += lines
                        log("\(lines) events for \(outgoing.subject) not published (\(error))")
                    }
                    start = stop + 1
                }
            }
        }
        output.clearTouched()
        let changes = output.pendingShown
        output.pendingShown.removeAll(keepingCapacity: true)
        let routers = admission.routers
        shared.state.withLock {
            $0.counts[.eventsPublished] += events
            $0.counts[.messagesPublished] += messages
            $0.counts[.droppedEvents] += droppedEvents
            $0.counts.applied = seq
            $0.counts.routers = routers
            if !changes.isEmpty { $0.shown.apply(changes) }
        }
    }
}
