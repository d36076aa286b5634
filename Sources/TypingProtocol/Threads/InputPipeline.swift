import TypingCore

/// Input bytes into a ``Session``, through a parsing pool (`ParsingPool`) while input floods in:
/// the one owner of "frame lines into batches, parse them on other threads, apply
/// them in order". The daemon's event loop and the fuzzer feed it; neither touches
/// the pool (as swift-nio's `ByteToMessageHandler` drives a decoder, and its
/// callers never do).
///
/// Input that comes a little at a time, while nothing waits in the pool, is framed,
/// parsed and applied on the calling thread at once, as without threads, so a lone
/// request pays no hand-off. A read that filled the read buffer (a flood), and
/// anything read while batches are in flight, goes through the pool, and parsed
/// batches are applied as they come. Either way the output is the same, byte for
/// byte, and lines are applied at the time they were read.
///
/// Only the thread that made the pipeline may use it. Going away, it stops and joins
/// its threads.
///
/// It is public so that a program's loop, in another module, gets it specialized
/// for its output (the bodies of `package` declarations are not visible to another
/// module's optimizer), and so that a program that embeds the engine can apply a
/// flood of input as typingd does.
public struct InputPipeline<Format: EventFormat & ~Copyable, Sink: ByteSink>: ~Copyable {
    /// Lines and bytes per batch, and batches per thread in the ring: at most
    /// `batchLines` × `batchesPerThread` × threads lines, and as many batches of
    /// `batchBytes` (plus the line that crosses it) in flight.
    package static var batchLines: Int { 256 }
    package static var batchBytes: Int { 1 << 14 }
    package static var batchesPerThread: Int { 4 }

    /// The session, which the pipeline feeds.
    public var session: Session<Format, Sink>
    /// The parsing threads, with more than one thread.
    @usableFromInline let pool: ParsingPool?

    /// A pipeline into `session` with `threads` threads parsing, this one included
    /// (1: no other thread; everything happens on this one).
    package init(
        session: consuming Session<Format, Sink>, threads: Int, batchLines: Int = batchLines,
        batchBytes: Int = batchBytes
    ) throws(ThreadSpawner.Failure) {
        let decoder = session.decoder
        self.session = session
        pool =
            threads > 1
            ? try ParsingPool(
                workers: threads - 1, slots: InputPipeline.batchesPerThread * threads,
                lines: batchLines, bytes: batchBytes, decoder: decoder)
            : nil
    }

    deinit {
        pool?.stop()
    }

    /// True when no batch waits to be applied (the session's time may then be
    /// moved: nothing read earlier is still to be applied).
    @inlinable
    public var isIdle: Bool { pool?.isIdle ?? true }

    /// Feeds `chunk`, read at `stamp` (the real clock's reading; nil with the manual
    /// clock). `flooded`: the read filled the read buffer, so more input surely
    /// waits. Parsed batches are applied as they come, without waiting for the
    /// others (see ``settle()``). Returns false after a pause (a signal, or a failed
    /// write the session keeps): what was not applied is dropped.
    @inlinable
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, stamp: Int?, flooded: Bool) throws(Sink.Failure) -> Bool
    {
        guard let pool, flooded || !pool.isIdle else {
            return try session.feed(chunk) == chunk.count
        }
        var offset = 0
        while offset < chunk.count {
            guard var free = try pool.takeFree(applying: { batch throws(Sink.Failure) in try apply(&batch) }) else {
                return false
            }
            free.batch.stamp = stamp
            offset += session.frame(UnsafeRawBufferPointer(rebasing: chunk[offset...]), into: &free.batch)
            pool.submit(free)
        }
        return try pool.applyInOrder(wait: false) { batch throws(Sink.Failure) in try apply(&batch) }
    }

    /// Applies every batch in flight, parsing what no worker has claimed yet rather
    /// than waiting. Returns false after a pause.
    @inlinable
    public mutating func settle() throws(Sink.Failure) -> Bool {
        guard let pool else { return true }
        return try pool.applyInOrder(wait: true) { batch throws(Sink.Failure) in try apply(&batch) }
    }

    /// Ends the input: applies what is in flight and a final line without LF, if
    /// any; then, with the manual clock, the remaining streaks time out (unless
    /// draining is off). Returns false after a pause.
    @inlinable
    public mutating func finish() throws(Sink.Failure) -> Bool {
        guard let pool, !pool.isIdle else {
            try session.finish()
            return true
        }
        guard var free = try pool.takeFree(applying: { batch throws(Sink.Failure) in try apply(&batch) }) else {
            return false
        }
        session.frameEnd(into: &free.batch)
        pool.submit(free)
        guard try settle() else { return false }
        try session.drainIfManual()
        return true
    }

    /// Applies one parsed batch; false after a pause.
    @inlinable
    mutating func apply(_ batch: inout LineBatch) throws(Sink.Failure) -> Bool {
        try session.apply(&batch) == batch.count
    }
}

extension InputPipeline where Format: ~Copyable {
    /// A pipeline into `session` with `threads` threads parsing, this one included,
    /// for a program outside this package that applies a flood of input as
    /// typingd does.
    public static func make(session: consuming Session<Format, Sink>, threads: Int) throws -> InputPipeline {
        try InputPipeline(session: session, threads: threads)
    }
}
