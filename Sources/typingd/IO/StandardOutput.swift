import Glibc
import TypingProtocol

/// stdout as the session's ``ByteSink``: writes everything with write(2), blocking
/// while the reader is slow (so nothing is lost and memory stays bounded), yet
/// noticing a signal while it waits.
///
/// When stdout is a pipe or a socket, it is switched to non-blocking mode for the
/// life of the loop (``restore()`` puts the flags back), so a full pipe is waited
/// for in poll(2) together with the signal watcher's eventfd. After a signal, what
/// is already produced is still written as long as the reader keeps taking bytes;
/// once the reader has taken nothing for ``stallLimit`` milliseconds, typingd stops
/// waiting for it. (A terminal or a file is written in blocking mode: a terminal
/// stopped with Ctrl-S delays the signal until it resumes.)
struct StandardOutput: ByteSink {
    /// How long, after a signal, a reader may take nothing before typingd gives up.
    static let stallLimit: Int32 = 1000

    let fd: Int32
    let signals: SignalWatcher
    /// What is written, for messages: "stdout", "the record file".
    let name: String
    /// The file status flags before ``init(fd:signals:name:)`` changed them, if it did.
    private let originalFlags: Int32?

    /// `fd` (stdout unless told otherwise), made non-blocking when it is a pipe or a socket.
    init(fd: Int32, signals: SignalWatcher, name: String = "stdout") {
        self.fd = fd
        self.signals = signals
        self.name = name
        var status = stat()
        let flags = fcntl(fd, F_GETFL)
        if fstat(fd, &status) == 0, flags >= 0, flags & O_NONBLOCK == 0,
            (status.st_mode & S_IFMT) == S_IFIFO || (status.st_mode & S_IFMT) == S_IFSOCK,
            fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0
        {
            originalFlags = flags
        } else {
            originalFlags = nil
        }
    }

    /// Puts back the file status flags ``init(fd:signals:)`` changed.
    func restore() {
        if let originalFlags { _ = fcntl(fd, F_SETFL, originalFlags) }
    }

    /// Stop between lines once a signal has arrived.
    var shouldPause: Bool { signals.signal != nil }

    /// Writes every byte of `bytes`: partial writes continue, EINTR retries, a full
    /// pipe is waited for, EPIPE means the reader is gone.
    func write(_ bytes: UnsafeRawBufferPointer) throws(IOFailure) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, base + offset, bytes.count - offset)
            if written >= 0 {
                offset += written
                continue
            }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                try waitUntilWritable()
            case EPIPE:
                throw .readerGone
            default:
                throw .failed(operation: "write \(name)", errno: errno)
            }
        }
    }

    /// Waits until stdout takes bytes again: for as long as it takes, or, once a
    /// signal has arrived, for at most ``stallLimit`` ms.
    private func waitUntilWritable() throws(IOFailure) {
        if signals.signal != nil {
            var out = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            while true {
                let count = poll(&out, 1, StandardOutput.stallLimit)
                if count > 0 { return }
                if count == 0 { throw .stalled }
                if errno != EINTR { throw .failed(operation: "wait for \(name) (poll)", errno: errno) }
            }
        }
        var fds = [
            pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
            pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0)
        ]
        while poll(&fds, 2, -1) < 0 {
            if errno != EINTR { throw .failed(operation: "wait for \(name) (poll)", errno: errno) }
        }
        // Either stdout can take bytes, or a signal came: the caller's next write
        // tells which, and after a signal the next wait is a bounded one.
    }

    /// Writes a diagnostic line to stderr, terminal-safe (``TextFormat/terminalSafe(_:)``),
    /// ignoring failures (there is nowhere else to report them). stderr may share
    /// stdout's pipe, non-blocking: a full pipe is waited for, a second at most.
    static func diagnose(_ message: String) {
        var line = TextFormat.terminalSafe(message) + "\n"
        line.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(2, base + offset, bytes.count - offset)
                if written >= 0 {
                    offset += written
                } else if errno == EAGAIN || errno == EWOULDBLOCK {
                    var err = pollfd(fd: 2, events: Int16(POLLOUT), revents: 0)
                    if poll(&err, 1, 1000) == 0 { return }
                } else if errno != EINTR {
                    return
                }
            }
        }
    }
}
