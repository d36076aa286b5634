import Glibc
import TypingCore

/// Decodes batches of lines on worker threads while the main thread applies them,
/// in order: parsing (jansson and the field checks) is most of typingd's work per
/// line and needs no engine, so it runs on every core while the engine stays on one.
///
/// A ring of preallocated batches goes round: the main thread frames input into
/// the batch at the head and marks it filled; whoever is free, a worker or the main
/// thread itself, claims the next filled batch in ring order and decodes it; the
/// main thread applies the batch at the tail once it is decoded, and frees it. No
/// batch is ever touched by two threads at once: the states, kept under one mutex,
/// pass each batch from owner to owner. The ring holds a bounded number of lines
/// and bytes, and allocates nothing once its batches have grown to their size.
///
/// The main thread frames input as far ahead as the ring allows, and decodes only
/// when it would otherwise wait: then it takes the oldest batch nobody has claimed.
/// Input that comes a little at a time need not reach it (the daemon's event loop
/// handles such input on the main thread, as without workers), so a lone request
/// when idle pays no hand-off.
public final class ParallelDecoder: @unchecked Sendable {
    enum State {
        case free, filled, claimed, decoded
    }

    private let slots: UnsafeMutablePointer<LineBatch>
    private var states: [State]
    private let count: Int
    private let decoder: CommandDecoder
    private var mutex = pthread_mutex_t()
    /// Signalled when a batch is filled (workers wait on it).
    private var filled = pthread_cond_t()
    /// Signalled when a batch is decoded (the main thread may wait on it).
    private var decoded = pthread_cond_t()
    private var stopping = false
    private var threads: [pthread_t] = []
    /// The next batch to fill, to claim, and to apply.
    private var head = 0, claim = 0, tail = 0
    /// Batches between the tail and the head.
    private var inFlight = 0

    /// Why the threads could not start: `pthread_create`'s error number.
    public struct StartFailure: Error {
        public let errno: Int32
    }

    /// `workers` threads (at least 1) decoding for `session`, and a ring of `slots`
    /// batches of at most `lines` lines or `bytes` bytes each.
    public convenience init<Format: EventFormat & ~Copyable, Sink: ByteSink>(
        workers: Int, slots: Int, lines: Int, bytes: Int, for session: borrowing Session<Format, Sink>
    ) throws(StartFailure) {
        try self.init(workers: workers, slots: slots, lines: lines, bytes: bytes, decoder: session.decoder)
    }

    init(workers: Int, slots: Int, lines: Int, bytes: Int, decoder: CommandDecoder) throws(StartFailure) {
        CommandDecoder.prepareForThreads()
        count = max(2, slots)
        self.decoder = decoder
        self.slots = .allocate(capacity: count)
        self.slots.initialize(repeating: LineBatch(lines: lines, bytes: bytes), count: count)
        for index in 0..<count { self.slots[index] = LineBatch(lines: lines, bytes: bytes) }
        states = Array(repeating: .free, count: count)
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&filled, nil)
        pthread_cond_init(&decoded, nil)
        for _ in 0..<max(1, workers) {
            var thread = pthread_t()
            let context = Unmanaged.passRetained(self).toOpaque()
            let status = pthread_create(&thread, nil, { context in
                guard let context else { return nil }
                Unmanaged<ParallelDecoder>.fromOpaque(context).takeRetainedValue().work()
                return nil
            }, context)
            guard status == 0 else {
                Unmanaged<ParallelDecoder>.fromOpaque(context).release()
                stop()
                throw StartFailure(errno: status)
            }
            threads.append(thread)
        }
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
        pthread_cond_destroy(&decoded)
        pthread_cond_destroy(&filled)
        pthread_mutex_destroy(&mutex)
    }

    /// Stops and joins the workers (the main thread calls it once, at the end).
    public func stop() {
        pthread_mutex_lock(&mutex)
        stopping = true
        pthread_cond_broadcast(&filled)
        pthread_mutex_unlock(&mutex)
        for thread in threads { pthread_join(thread, nil) }
        threads.removeAll()
    }

    /// True when a batch is free to fill.
    public var hasRoom: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return states[head] == .free
    }

    /// True when no batch waits to be applied.
    public var isIdle: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return inFlight == 0
    }

    /// The batch at the head, to fill (only the main thread calls this, when
    /// ``hasRoom``); ``submit()`` hands it on.
    public var batchToFill: UnsafeMutablePointer<LineBatch> {
        slots + head
    }

    /// Hands the batch at the head on for decoding, waking a worker.
    public func submit() {
        pthread_mutex_lock(&mutex)
        states[head] = .filled
        head = (head + 1) % count
        inFlight += 1
        pthread_cond_signal(&filled)
        pthread_mutex_unlock(&mutex)
    }

    /// Applies the decoded batches at the tail, in order, with `apply`. With `wait`,
    /// goes on until no batch is in flight: rather than wait for a worker, it decodes
    /// the oldest batch nobody has claimed, and it waits only when all are claimed.
    /// Returns false when `apply` did (a pause: the rest is not to be applied).
    public func applyInOrder<Failure: Error>(
        wait: Bool, _ apply: (inout LineBatch) throws(Failure) -> Bool
    ) throws(Failure) -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while inFlight > 0 {
            if states[tail] == .decoded {
                pthread_mutex_unlock(&mutex)
                let goOn: Bool
                do {
                    goOn = try apply(&slots[tail])
                } catch {
                    pthread_mutex_lock(&mutex)
                    throw error
                }
                slots[tail].reset()
                pthread_mutex_lock(&mutex)
                states[tail] = .free
                tail = (tail + 1) % count
                inFlight -= 1
                if !goOn { return false }
            } else if !wait {
                return true
            } else if states[claim] == .filled {
                decodeNextFilled()   // here, rather than wait for a worker
            } else {
                pthread_cond_wait(&decoded, &mutex)
            }
        }
        return true
    }

    /// A worker: claims filled batches in ring order and decodes them.
    private func work() {
        pthread_mutex_lock(&mutex)
        while true {
            while !stopping && states[claim] != .filled { pthread_cond_wait(&filled, &mutex) }
            if stopping { break }
            decodeNextFilled()
            pthread_cond_signal(&decoded)
        }
        pthread_mutex_unlock(&mutex)
    }

    /// Claims the filled batch at `claim` and decodes it with the mutex released.
    /// Called, and returns, with the mutex held.
    private func decodeNextFilled() {
        let index = claim
        states[index] = .claimed
        claim = (claim + 1) % count
        pthread_mutex_unlock(&mutex)
        slots[index].decode(with: decoder)
        pthread_mutex_lock(&mutex)
        states[index] = .decoded
    }
}
