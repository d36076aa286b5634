import CLinux
import Glibc
import Synchronization
import TypingProtocol

/// The signals typingd handles, and a watcher that notices them at any moment.
///
/// - Signals that would otherwise end the process from outside (SIGINT, SIGTERM,
///   SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO,
///   SIGPWR, SIGXCPU, SIGSTKFLT and the real-time signals) end it like SIGTERM:
///   typingd stops between two lines, writes what it has produced (whole lines),
///   and exits 0. They are blocked in every thread and taken by one thread in
///   `sigwaitinfo`, which records the first one in an atomic flag and wakes the
///   event loop through an eventfd: the loop checks the flag after every line (one
///   atomic load) and polls the eventfd while it waits for input, a deadline or a
///   slow reader of stdout.
/// - SIGPIPE and SIGXFSZ are ignored, so that a write fails instead: EPIPE (the
///   reader went away) ends typingd quietly with 0, EFBIG (a file-size limit) with
///   a message and 74.
/// - Faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT), job
///   control (SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT) and signals ignored by default
///   (SIGCHLD, SIGURG, SIGWINCH) keep their default actions.
final class SignalWatcher: Sendable {
    /// The signals that end typingd like SIGTERM.
    static var ending: [Int32] {
        [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO,
         SIGPWR, SIGXCPU, SIGSTKFLT] + Array(cl_sigrtmin()...cl_sigrtmax())
    }

    /// The signals ignored so that the failing write reports them.
    static let ignored: [Int32] = [SIGPIPE, SIGXFSZ]

    /// Blocks the ending signals in this thread (and the threads it starts later)
    /// and ignores the others. Called first thing in `main`, so that a signal that
    /// arrives while typingd starts up is kept pending rather than killing it.
    static func install() {
        var mask = endingMask
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        for signal in ignored { Glibc.signal(signal, SIG_IGN) }
    }

    /// The set of the ending signals.
    static var endingMask: sigset_t {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in ending { sigaddset(&mask, signal) }
        return mask
    }

    /// The first ending signal received, or 0.
    private let received = Atomic<Int32>(0)
    /// Readable once a signal was received: for poll(2).
    let fd: Int32

    /// Starts the thread that waits for the ending signals (``install()`` must have
    /// blocked them). Fails if the eventfd or the thread cannot be made.
    init() throws(IOFailure) {
        fd = eventfd(0, Int32(EFD_CLOEXEC))
        guard fd >= 0 else { throw .failed(operation: "watch signals (eventfd)", errno: errno) }
        do {
            pthread_detach(try ThreadSpawner.spawn { [self] in waitForSignals() })
        } catch {
            throw .failed(operation: "watch signals (pthread_create)", errno: error.errno)
        }
    }

    /// The first ending signal received, if any.
    var signal: Int32? {
        let value = received.load(ordering: .acquiring)
        return value == 0 ? nil : value
    }

    /// The watcher thread: records each signal and wakes the loop. It never
    /// returns; the process ends around it.
    private func waitForSignals() {
        var mask = SignalWatcher.endingMask
        while true {
            let signal = sigwaitinfo(&mask, nil)
            guard signal > 0 else { continue }
            _ = received.compareExchange(expected: 0, desired: signal, ordering: .releasing)
            var one: UInt64 = 1
            _ = Glibc.write(fd, &one, MemoryLayout<UInt64>.size)
        }
    }
}
