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
/// - Threads (``threads`` > 1): while input floods in, lines are framed into
///   batches that ``ParallelDecoder`` workers decode on the other cores, and applied here
///   in order, stamped with the time they were read. When input comes a little at
///   a time, everything happens on this thread, as with one thread. Either way the
///   output is the same, byte for byte.
struct EventLoop {
    /// The settings.
    let configuration: SessionConfiguration
    /// Where `--record` writes, if anywhere (an open file).
    var record: Int32?
    /// Threads that decode input, this one included (1: no workers).
    var threads = 1
    /// The bytes read at a time.
    var readBuffer = InputReader.defaultCapacity

    /// Lines and bytes per batch, and batches per thread in the ring.
    static let batchLines = 256, batchBytes = 1 << 14, batchesPerThread = 4

    /// Runs until the end of input (and drain) or a signal, writing events in `format`.
    func run<Format: EventFormat & ~Copyable>(format: consuming Format, signals: SignalWatcher) throws(IOFailure) {
        let output = StandardOutput(fd: 1, signals: signals)
        defer { output.restore() }
        let recording = record.map { StandardOutput(fd: $0, signals: signals, name: "the record file") }
        var session = Session(configuration: configuration, format: format, sink: output, record: recording)
        let input = InputReader(fd: 0, capacity: readBuffer)
        let clock = MonotonicClock()
        let realClock = configuration.clock == .real
        var inputOpen = true
        var flooded = false
        var memory = MemoryReturn()
        MemoryReturn.configure()
        var pool: ParallelDecoder?
        if threads > 1 {
            do throws(ParallelDecoder.StartFailure) {
                pool = try ParallelDecoder(workers: threads - 1, slots: EventLoop.batchesPerThread * threads,
                                           lines: EventLoop.batchLines, bytes: EventLoop.batchBytes, for: session)
            } catch {
                throw .failed(operation: "start a parsing thread (pthread_create)", errno: error.errno)
            }
        }
        defer { pool?.stop() }
        /// Applies a decoded batch at its time; false after a pause.
        func apply(_ batch: inout LineBatch) throws(IOFailure) -> Bool {
            if let stamp = batch.stamp { try session.advance(to: stamp) }
            return try session.apply(batch) == batch.count
        }
        /// Frames `chunk` into batches for the pool, applying decoded batches as they
        /// come (and waiting for one when the ring is full). False after a pause.
        func feed(_ chunk: UnsafeRawBufferPointer, to pool: ParallelDecoder, stamp: Int?) throws(IOFailure) -> Bool {
            var offset = 0
            while offset < chunk.count {
                while !pool.hasRoom {
                    guard try pool.applyInOrder(wait: true, apply) else { return false }
                }
                let batch = pool.batchToFill
                batch.pointee.stamp = stamp
                offset += session.frame(UnsafeRawBufferPointer(rebasing: chunk[offset...]), into: &batch.pointee)
                if !batch.pointee.isEmpty { pool.submit() }
            }
            return try pool.applyInOrder(wait: false, apply)
        }

        while signals.signal == nil {
            if !flooded, let pool {
                // Everything read is applied before waiting.
                guard try pool.applyInOrder(wait: true, apply) else { break }
            }
            if !flooded {
                try session.flush()
                memory.check(footprint: session.engine.membershipCount + session.engine.typingCount)
            }
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

            let now = clock.milliseconds
            if realClock && pool?.isIdle ?? true { try session.advance(to: now) }
            flooded = false
            guard ready.input else { continue }
            let chunk = try input.read()
            let full = chunk.count == input.buffer.count
            if chunk.isEmpty {
                inputOpen = false
                if let pool, !pool.isIdle {
                    let batch = pool.batchToFill
                    session.frameEnd(into: &batch.pointee)
                    if !batch.pointee.isEmpty { pool.submit() }
                    guard try pool.applyInOrder(wait: true, apply) else { break }
                    try session.drainIfManual()
                } else {
                    try session.finish()
                }
                if !configuration.drain { break }
            } else if let pool, full || !pool.isIdle {
                guard try feed(chunk, to: pool, stamp: realClock ? now : nil) else { break }
                flooded = full
            } else {
                // Less than the whole chunk: the session paused for a signal.
                guard try session.feed(chunk) == chunk.count else { break }
                flooded = full
            }
        }
        if let pool { _ = try pool.applyInOrder(wait: true, apply) }
        try session.flush()
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
