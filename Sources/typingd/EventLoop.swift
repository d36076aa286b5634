import Glibc
import TypingProtocol

/// typingd's one loop: wait (poll) for input, a signal or the next deadline; fire
/// due timeouts; read and process what is available; write every event before
/// waiting again.
///
/// - Flushing: output is written before every wait, so nothing is held back while
///   idle. When a read fills the whole input buffer (a flood), more input is surely
///   waiting: output then collects and the session writes it each time
///   ``OutputPolicy/flushThreshold`` bytes wait, in the middle of a step if need
///   be, so what is held stays bounded.
/// - Back-pressure: writes block until the reader takes the bytes, and no input is
///   read meanwhile. Nothing is dropped and memory stays bounded.
/// - Real clock: lines are stamped with the time they were read; timeouts due by
///   then fire first, and timeouts also fire while no input arrives.
/// - End of input: the manual clock drains at once; the real clock waits for the
///   remaining deadlines (unless `--no-drain`), then the loop ends.
/// - Signals (see ``SignalWatcher``): noticed between two lines, while waiting and
///   while blocked on a slow reader; what was produced is written, then the loop ends.
/// - Memory: after a large drop in state, freed memory is given back to the system
///   before waiting (see ``MemoryReturn``).
/// - Threads (``threads`` > 1): the ``InputPipeline`` parses input on the other
///   cores while it floods in, and applies it here in order, at the time it was
///   read; when input comes a little at a time, everything happens on this thread.
///   Either way the output is the same, byte for byte.
/// - Record (`--record`): the session writes every line as it is applied, and the
///   loop ends the record with the time it stopped at (see ``RecordFormat``).
struct EventLoop {
    /// The settings.
    let configuration: SessionConfiguration
    /// Where `--record` writes, if anywhere (an open file), and what it starts with.
    var record: (fd: Int32, header: RecordHeader)?
    /// Threads that parse input, this one included (1: no workers).
    var threads = 1
    /// The bytes read at a time.
    var readBuffer = InputReader.defaultCapacity

    /// Runs until the end of input (and drain) or a signal, writing events in `format`.
    func run<Format: EventFormat & ~Copyable>(format: consuming Format, signals: SignalWatcher) throws(IOFailure) {
        let output = StandardOutput(fd: 1, signals: signals)
        defer { output.restore() }
        let recording = record.map {
            (sink: StandardOutput(fd: $0.fd, signals: signals, name: "the record file"), header: $0.header)
        }
        let session = Session(configuration: configuration, format: format, sink: output, record: recording)
        var pipeline: InputPipeline<Format, StandardOutput>
        do throws(ThreadSpawner.Failure) {
            pipeline = try InputPipeline(session: session, threads: threads)
        } catch {
            throw .failed(operation: "start a parsing thread (pthread_create)", errno: error.errno)
        }
        let input = InputReader(fd: 0, capacity: readBuffer)
        do throws(IOFailure) {
            try loop(&pipeline, input: input, signals: signals)
        } catch {
            // The record still says where the session stopped (if its own file works).
            pipeline.session.endRecord()
            _ = try? pipeline.session.flush()
            throw error
        }
        // No settle here: the loop ends with nothing in flight at the end of input
        // (finish settled it), and after a signal or a failed write nothing more is
        // applied, not even the next batch's first line: the output is a prefix of
        // what the whole input would have given.
        pipeline.session.endRecord()
        try pipeline.session.flush()
    }

    /// Reads, applies and writes until the end of input (and drain) or a signal.
    @inline(__always)
    private func loop<Format: EventFormat & ~Copyable>(
        _ pipeline: inout InputPipeline<Format, StandardOutput>,
        input: borrowing InputReader,
        signals: SignalWatcher
    ) throws(IOFailure) {
        let clock = MonotonicClock()
        let realClock = configuration.clock == .real
        var inputOpen = true
        var flooded = false
        var memory = MemoryReturn()
        MemoryReturn.configure()
        while signals.signal == nil {
            if !flooded {
                // Everything read is applied and written before waiting.
                guard try pipeline.settle() else { break }
                try pipeline.session.flush()
                memory.check(
                    footprint: pipeline.session.engine.membershipCount + pipeline.session.engine.typingCount
                        + pipeline.session.engine.openViewCount)
            }
            let deadline = realClock ? pipeline.session.nextDeadline() : nil
            if !inputOpen && deadline == nil { break }

            var timeout: Int32 = -1
            if flooded {
                timeout = 0
            } else if let deadline {
                timeout = Int32(clamping: clock.millisecondsUntil(deadline))
            }
            let ready = try wait(input: inputOpen ? input.fd : -1, signals: signals.fd, timeout: timeout)
            if ready.signal { break }

            let now = clock.milliseconds
            // Batches in flight carry the time they were read; the clock moves
            // only once they are applied.
            if realClock && pipeline.isIdle { try pipeline.session.advance(to: now) }
            flooded = false
            guard ready.input else { continue }
            let chunk = try input.read()
            if chunk.isEmpty {
                inputOpen = false
                guard try pipeline.finish() else { break }
                if !configuration.drain { break }
            } else {
                let full = chunk.count == input.buffer.count
                guard try pipeline.feed(chunk, stamp: realClock ? now : nil, flooded: full) else { break }
                flooded = full
            }
        }
    }

    /// Waits up to `timeout` ms (-1: forever) for input or a signal; a descriptor
    /// of -1 is not watched.
    func wait(input: Int32, signals: Int32, timeout: Int32) throws(IOFailure) -> (input: Bool, signal: Bool) {
        var fds = [
            pollfd(fd: input, events: Int16(POLLIN), revents: 0),
            pollfd(fd: signals, events: Int16(POLLIN), revents: 0)
        ]
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
