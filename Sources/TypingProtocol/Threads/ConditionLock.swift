import Glibc

/// A pthread mutex with condition variables, at addresses that never move.
///
/// pthread objects must not be moved or copied once initialised, and Swift may move
/// a stored property whenever it likes (`&mutex` on a class's stored property is a
/// temporary in general), so they live in memory allocated here, as swift-nio's
/// `NIOLock` keeps its mutex in tail-allocated storage. The class only hands out
/// `lock`, `unlock`, `wait` and `signal`: the state the lock protects belongs to
/// whoever holds it (``ParsingPool``).
///
/// `@unchecked Sendable`: the pointers are set once in `init` and freed in `deinit`;
/// everything done through them is what pthread objects are made for, from any thread.
package final class ConditionLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let conditions: UnsafeMutablePointer<pthread_cond_t>
    private let conditionCount: Int

    /// A lock with `conditions` condition variables, numbered from 0.
    package init(conditions: Int) {
        conditionCount = max(1, conditions)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.conditions = .allocate(capacity: conditionCount)
        for index in 0..<conditionCount {
            (self.conditions + index).initialize(to: pthread_cond_t())
            pthread_cond_init(self.conditions + index, nil)
        }
    }

    deinit {
        for index in 0..<conditionCount { pthread_cond_destroy(conditions + index) }
        conditions.deinitialize(count: conditionCount)
        conditions.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Takes the mutex.
    @inline(__always)
    package func lock() {
        pthread_mutex_lock(mutex)
    }

    /// Releases the mutex.
    @inline(__always)
    package func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Runs `body` holding the mutex.
    @inline(__always)
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits on condition `condition`, releasing the mutex meanwhile (the caller holds
    /// it, and holds it again on return). Wakes up spuriously at times: callers wait in
    /// a loop on the state they are waiting for.
    @inline(__always)
    package func wait(on condition: Int) {
        pthread_cond_wait(conditions + condition, mutex)
    }

    /// Wakes one thread waiting on condition `condition`.
    @inline(__always)
    package func signal(_ condition: Int) {
        pthread_cond_signal(conditions + condition)
    }

    /// Wakes every thread waiting on condition `condition`.
    @inline(__always)
    package func broadcast(_ condition: Int) {
        pthread_cond_broadcast(conditions + condition)
    }
}
