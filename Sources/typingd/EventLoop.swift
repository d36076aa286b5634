import Glibc
import TypingProtocol

/// typingd's one loop: wait (poll) for input, a signal or the next deadline; fire
/// due timeouts; read and process what is available; write every event before
/// waiting again.
///
/// - Flushing: output is written before every wait, so nothing is held back
///   while idle. When a read fills the whole buffer (a flood), more input is
///   surely waiting: output then accumulates up to ``flushThreshold`` bytes and is
///   written in large chunks. A chunk whose lines produce more (a change in a
///   room of thousands) is processed in parts, writing between them, and a single
///   step that produces more than 1 MiB writes as it goes, so output held in
///   memory stays bounded.
/// - Back-pressure: writes block until the reader takes the bytes, and no input
///   is read meanwhile. Nothing is dropped and memory stays bounded.
/// - Real clock: lines are stamped with the time they were read; timeouts due by
///   then fire first, and timeouts also fire while no input arrives.
/// - End of input: the manual clock drains at once; the real clock waits for the
///   remaining deadlines (unless `--no-drain`), then the loop ends.
/// - SIGINT/SIGTERM: what was produced is written, then the loop ends.
/// - Memory: when many members have left, freed memory is given back to the
///   system before waiting (see ``MemoryReturn``).
struct EventLoop {
    /// Output is written once this much has accumulated, even during a flood
    /// (the session also pauses mid-chunk at its own limit, the same size).
    static let flushThreshold = 1 << 18

    /// The settings.
    let configuration: SessionConfiguration

    /// Runs until the end of input (and drain) or a signal.
    func run() throws(IOFailure) {
        var session = Session(configuration: configuration)
        let input = InputReader(fd: 0)
        let output = OutputWriter(fd: 1)
        let spillFailure = FailureBox()
        session.spillOutput(over: 4 * EventLoop.flushThreshold) { bytes in
            guard spillFailure.failure == nil else { return }
            do throws(IOFailure) { try output.write(bytes) } catch { spillFailure.failure = error }
        }
        let signals = SignalWatcher()
        let clock = MonotonicClock()
        let realClock = configuration.clock == .real
        var inputOpen = true
        var flooded = false
        var memory = MemoryReturn()

        while true {
            if let failure = spillFailure.failure { throw failure }
            if session.pendingOutputCount > 0 && (!flooded || session.pendingOutputCount >= EventLoop.flushThreshold) {
                try session.takeOutput { bytes throws(IOFailure) in try output.write(bytes) }
            }
            if !flooded { memory.check(memberships: session.engine.membershipCount) }
            let deadline = realClock ? session.nextDeadline() : nil
            if !inputOpen && deadline == nil { break }

            var timeout: Int32 = -1
            if flooded {
                timeout = 0
            } else if let deadline {
                timeout = Int32(clamping: clock.millisecondsUntil(deadline))
            }
            let ready = try wait(input: inputOpen ? input.fd : -1, signals: signals.fd, timeout: timeout)
            if ready.signal { break }

            if realClock {
                let now = clock.milliseconds
                session.advance(to: now)
            }
            flooded = false
            guard ready.input else { continue }
            let chunk = try input.read()
            if chunk.isEmpty {
                inputOpen = false
                session.finish()
                if !configuration.drain { break }
            } else {
                var consumed = session.feed(chunk)
                while consumed < chunk.count {
                    if let failure = spillFailure.failure { throw failure }
                    try session.takeOutput { bytes throws(IOFailure) in try output.write(bytes) }
                    consumed += session.feed(UnsafeRawBufferPointer(rebasing: chunk[consumed...]))
                }
                flooded = chunk.count == input.buffer.count
            }
        }
        if let failure = spillFailure.failure { throw failure }
        try session.takeOutput { bytes throws(IOFailure) in try output.write(bytes) }
    }

    /// Waits up to `timeout` ms (-1: forever) for input or a signal; a descriptor
    /// of -1 is not watched.
    func wait(input: Int32, signals: Int32, timeout: Int32) throws(IOFailure) -> (input: Bool, signal: Bool) {
        var fds = [pollfd(fd: input, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: signals, events: Int16(POLLIN), revents: 0)]
        while true {
            let count = poll(&fds, nfds_t(fds.count), timeout)
            if count >= 0 { break }
            if errno == EINTR { continue }
            throw .failed(operation: "wait for input (poll)", errno: errno)
        }
        let readable = Int16(POLLIN | POLLHUP | POLLERR)
        return ((fds[0].revents & readable) != 0, (fds[1].revents & readable) != 0)
    }
}
