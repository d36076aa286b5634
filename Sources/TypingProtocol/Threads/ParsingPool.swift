import Glibc
import TypingCore

/// Parsing threads, and the ring of line batches they parse: jansson and the field
/// checks are most of typingd's work per line and need no engine, so they run on
/// every core while the engine stays on one thread.
///
/// A ring of preallocated ``LineBatch``es goes round. Each batch has one owner at a
/// time, and its state, kept under the lock, says who:
///
/// | state | owner | next |
/// |---|---|---|
/// | `free` | the owner thread, which may fill it (``takeFree(applying:)``) | `filled` |
/// | `filled` | nobody: waiting to be claimed | `claimed` |
/// | `claimed` | the thread that claimed it, which parses it with the lock released | `parsed` |
/// | `parsed` | nobody: waiting to be applied | `free`, once applied |
///
/// The *owner thread* (the one that made the pool: the daemon's main thread, a
/// test, the fuzzer) fills batches at the head, in ring order, and applies parsed
/// ones at the tail, in ring order (``applyInOrder(wait:_:)``). Workers claim filled
/// batches in ring order and parse them. Rather than wait for a worker, the owner
/// parses the oldest unclaimed batch itself. No batch is ever touched by two
/// threads at once, and the only way to reach a batch to fill is
/// ``takeFree(applying:)``, which first makes room (applying what waits at the
/// tail) and hands out a ``FreeBatch`` that ``submit(_:)`` takes back: the head is
/// never a batch still in flight, at the end of input as anywhere else.
///
/// Only the owner thread may call ``takeFree(applying:)``, ``submit(_:)``,
/// ``applyInOrder(wait:_:)``, ``isIdle`` and ``stop()``.
///
/// - Lock order: there is one lock; nothing else is locked while it is held, and
///   batches are parsed and applied with it released.
/// - `@unchecked Sendable`: every stored property but the batches is guarded by the
///   lock or immutable; each batch is guarded by its state, as above.
/// - ``stop()`` is mandatory: each worker keeps the pool alive while it runs, so the
///   pool is never freed before its workers are stopped and joined.
/// - If `apply` throws (the session's sink failed), the batch stays at the tail,
///   unapplied, and so does everything after it: the owner is to stop the pool and
///   drop the session, as the daemon does.
@usableFromInline
final class ParsingPool: @unchecked Sendable {
    enum State {
        case free, filled, claimed, parsed
    }

    /// Condition variables of ``lock``.
    private static let filledCondition = 0, parsedCondition = 1

    private let slots: UnsafeMutablePointer<LineBatch>
    private let count: Int
    private let decoder: CommandDecoder
    private let lock = ConditionLock(conditions: 2)
    // Guarded by `lock`:
    private var states: [State]
    private var stopping = false
    /// The next batch to fill, to claim, and to apply.
    private var head = 0, claim = 0, tail = 0
    /// Batches between the tail and the head.
    private var inFlight = 0
    /// Touched by the owner thread only.
    private var threads: [pthread_t] = []

    /// `workers` threads (at least 1) parsing with `decoder`, and a ring of `slots`
    /// batches (at least 2) that count as full at `lines` lines or `bytes` bytes.
    init(workers: Int, slots: Int, lines: Int, bytes: Int, decoder: CommandDecoder) throws(ThreadSpawner.Failure) {
        CommandDecoder.prepareForThreads()
        count = max(2, slots)
        self.decoder = decoder
        self.slots = .allocate(capacity: count)
        for index in 0..<count { (self.slots + index).initialize(to: LineBatch(lines: lines, bytes: bytes)) }
        states = Array(repeating: .free, count: count)
        for _ in 0..<max(1, workers) {
            do {
                threads.append(try ThreadSpawner.spawn { [self] in work() })
            } catch {
                stop()
                throw error
            }
        }
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    /// Stops and joins the workers. The owner calls it once, at the end (see above).
    func stop() {
        lock.withLock {
            stopping = true
            lock.broadcast(ParsingPool.filledCondition)
        }
        for thread in threads { pthread_join(thread, nil) }
        threads.removeAll()
    }

    /// True when no batch waits to be applied.
    @usableFromInline
    var isIdle: Bool {
        lock.withLock { inFlight == 0 }
    }

    /// The batch at the head, once it is free to fill: while it is still in flight,
    /// applies the batches at the tail with `apply` (waiting for them to be parsed).
    /// Returns nil when `apply` asked for a pause. Hand the batch back with
    /// ``submit(_:)`` before taking another.
    @usableFromInline
    func takeFree<Failure: Error>(
        applying apply: (inout LineBatch) throws(Failure) -> Bool
    ) throws(Failure) -> FreeBatch? {
        while !lock.withLock({ states[head] == .free }) {
            guard try applyInOrder(wait: true, apply) else { return nil }
        }
        // The head is free: no other thread touches it until it is submitted.
        return FreeBatch(pointer: slots + head)
    }

    /// Hands the batch taken with ``takeFree(applying:)`` on for parsing, waking a
    /// worker; an empty batch stays where it is, free.
    @usableFromInline
    func submit(_ batch: consuming FreeBatch) {
        precondition(batch.pointer == slots + head, "a batch was taken twice without being submitted")
        guard !slots[head].isEmpty else { return }
        lock.withLock {
            states[head] = .filled
            head = (head + 1) % count
            inFlight += 1
            lock.signal(ParsingPool.filledCondition)
        }
    }

    /// Applies the parsed batches at the tail, in order, with `apply`, and frees
    /// them. With `wait`, goes on until no batch is in flight: rather than wait for
    /// a worker, it parses the oldest batch nobody has claimed, and it waits only
    /// when all are claimed. Returns false when `apply` did (a pause: the batches
    /// after that one are not applied).
    @usableFromInline
    func applyInOrder<Failure: Error>(
        wait: Bool, _ apply: (inout LineBatch) throws(Failure) -> Bool
    ) throws(Failure) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        while inFlight > 0 {
            if states[tail] == .parsed {
                lock.unlock()
                let goOn: Bool
                do {
                    goOn = try apply(&slots[tail])
                } catch {
                    lock.lock()
                    throw error
                }
                slots[tail].reset()
                lock.lock()
                states[tail] = .free
                tail = (tail + 1) % count
                inFlight -= 1
                if !goOn { return false }
            } else if !wait {
                return true
            } else if states[claim] == .filled {
                parseNextFilled() // here, rather than wait for a worker
            } else {
                lock.wait(on: ParsingPool.parsedCondition)
            }
        }
        return true
    }

    /// A worker: claims filled batches in ring order and parses them.
    private func work() {
        lock.lock()
        while true {
            while !stopping && states[claim] != .filled { lock.wait(on: ParsingPool.filledCondition) }
            if stopping { break }
            parseNextFilled()
            lock.signal(ParsingPool.parsedCondition)
        }
        lock.unlock()
    }

    /// Claims the filled batch at `claim` and parses it with the lock released.
    /// Called, and returns, with the lock held.
    private func parseNextFilled() {
        let index = claim
        states[index] = .claimed
        claim = (claim + 1) % count
        lock.unlock()
        slots[index].decode(with: decoder)
        lock.lock()
        states[index] = .parsed
    }
}

/// The batch at the head of a ``ParsingPool``'s ring, free to fill: only
/// ``ParsingPool/takeFree(applying:)`` makes one, and ``ParsingPool/submit(_:)``
/// consumes it, so a batch in flight cannot be reached for filling.
@usableFromInline
struct FreeBatch: ~Copyable {
    @usableFromInline let pointer: UnsafeMutablePointer<LineBatch>

    @usableFromInline
    init(pointer: UnsafeMutablePointer<LineBatch>) {
        self.pointer = pointer
    }

    /// The batch, to fill.
    @inlinable
    var batch: LineBatch {
        unsafeAddress { UnsafePointer(pointer) }
        unsafeMutableAddress { pointer }
    }
}
