import CLinux
import Glibc

/// SIGINT and SIGTERM as a file descriptor to poll (signalfd), so the event loop
/// notices them between steps, writes what it has produced, and exits 0.
///
/// The two signals are blocked for the process; while typingd is blocked writing
/// to a reader that does not read, they wait until that write completes, so
/// nothing produced is lost.
struct SignalWatcher: ~Copyable {
    /// The signalfd, or -1 if it could not be made (the signals then keep their
    /// default action).
    let fd: Int32

    /// Blocks SIGINT and SIGTERM and opens a signalfd for them.
    init() {
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGINT)
        sigaddset(&mask, SIGTERM)
        let fd = signalfd(-1, &mask, Int32(SFD_CLOEXEC))
        if fd >= 0 { sigprocmask(SIG_BLOCK, &mask, nil) }
        self.fd = fd
    }

    deinit {
        if fd >= 0 { close(fd) }
    }
}
