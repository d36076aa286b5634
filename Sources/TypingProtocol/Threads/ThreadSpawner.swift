import Glibc

/// Starts threads: the one place typingd calls `pthread_create` (the parsing pool's
/// workers, the daemon's signal watcher).
package enum ThreadSpawner {
    /// Why a thread could not start: `pthread_create`'s error number.
    package struct Failure: Error, Equatable {
        package let errno: Int32
    }

    /// The closure a new thread runs, kept alive by the thread until it returns.
    private final class Body {
        let run: @Sendable () -> Void

        init(_ run: @escaping @Sendable () -> Void) {
            self.run = run
        }
    }

    /// Starts a joinable thread that runs `body`; the caller joins it (`pthread_join`)
    /// or detaches it (`pthread_detach`).
    package static func spawn(_ body: @escaping @Sendable () -> Void) throws(Failure) -> pthread_t {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let status = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, context)
        guard status == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw Failure(errno: status)
        }
        return thread
    }
}
