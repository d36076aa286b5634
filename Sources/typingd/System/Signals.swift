import CLinux
import Glibc
import Synchronization
import TypingProtocol

/// The signals typingd handles, and a watcher that notices them at any moment.
///
/// - Signals that would otherwise end the process from outside (SIGINT, SIGTERM,
///   SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGIO, SIGPWR,
///   SIGXCPU, SIGSTKFLT and the real-time signals) end it like SIGTERM:
///   typingd stops between two lines, writes what it has produced (whole lines),
///   and exits 0. They are blocked in every thread; one thread reads them from a
///   signalfd, records the first one in an atomic flag and wakes the
///   event loop through an eventfd: the loop checks the flag after every line (one
///   atomic load) and polls the eventfd while it waits for input, a deadline or a
///   slow reader of stdout.
/// - SIGPIPE and SIGXFSZ are ignored, so that a write fails instead: EPIPE (the
///   reader went away) ends typingd quietly with 0, EFBIG (a file-size limit) with
///   a message and 74. SIGPROF is ignored and left unblocked, for the crash
///   handler (see ``ignored``).
/// - Faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT), job
///   control (SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT) and signals ignored by default
///   (SIGCHLD, SIGURG, SIGWINCH) keep their default actions.
final class SignalWatcher: Sendable {
    /// The signals that end typingd like SIGTERM.
    static var ending: [Int32] {
        [
            SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGIO,
            SIGPWR, SIGXCPU, SIGSTKFLT
        ] + Array(cl_sigrtmin()...cl_sigrtmax())
    }

    /// The signals ignored: SIGPIPE and SIGXFSZ so that the failing write reports
    /// them; SIGPROF so that one signal Swift's crash handler pauses threads with
    /// (SIGUSR1, SIGUSR2 or SIGPROF, whichever a thread does not block) stays
    /// unblocked. With all three blocked, a fault took about 40 s to end typingd
    /// (the handler retried every thread) instead of a fraction of a second.
    static let ignored: [Int32] = [SIGPIPE, SIGXFSZ, SIGPROF]

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
    /// The ending signals, read by the watcher thread (they stay blocked everywhere).
    private let signals: Int32

    /// Starts the thread that waits for the ending signals (``install()`` must have
    /// blocked them). Fails if the eventfd, the signalfd or the thread cannot be made.
    init() throws(IOFailure) {
        fd = eventfd(0, Int32(EFD_CLOEXEC))
        guard fd >= 0 else { throw .failed(operation: "watch signals (eventfd)", errno: errno) }
        var mask = SignalWatcher.endingMask
        signals = signalfd(-1, &mask, Int32(SFD_CLOEXEC))
        guard signals >= 0 else { throw .failed(operation: "watch signals (signalfd)", errno: errno) }
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
    /// returns; the process ends around it. It reads a signalfd, not sigwaitinfo(2):
    /// a thread in sigwaitinfo has the signals it waits for unblocked, so Swift's
    /// crash handler, which pauses each thread with a signal it does not block, sent
    /// it SIGUSR1, which sigwaitinfo took as an ending signal; the crash then waited
    /// ~32 s for the thread to pause, and typingd exited 0.
    private func waitForSignals() {
        var info = signalfd_siginfo()
        while true {
            let count = Glibc.read(signals, &info, MemoryLayout<signalfd_siginfo>.size)
            guard count == MemoryLayout<signalfd_siginfo>.size else {
                if count < 0 && errno != EINTR { return } // cannot happen to a valid signalfd
                continue
            }
            let signal = Int32(bitPattern: info.ssi_signo)
            _ = received.compareExchange(expected: 0, desired: signal, ordering: .releasing)
            var one: UInt64 = 1
            _ = Glibc.write(fd, &one, MemoryLayout<UInt64>.size)
        }
    }
}
