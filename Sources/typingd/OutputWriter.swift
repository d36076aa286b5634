import Glibc

/// Writes bytes to a file descriptor with write(2), all of them: partial writes
/// continue, EINTR retries, EAGAIN waits until the descriptor is writable, EPIPE
/// means the reader is gone.
struct OutputWriter {
    /// The descriptor written to.
    let fd: Int32

    /// Writes every byte of `bytes`, blocking as long as the reader needs.
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
                var pollfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&pollfd, 1, -1)
            case EPIPE:
                throw .readerGone
            default:
                throw .failed(operation: "write stdout", errno: errno)
            }
        }
    }

    /// Writes a diagnostic line to stderr, ignoring failures (there is nowhere
    /// else to report them).
    static func diagnose(_ message: String) {
        var line = message + "\n"
        line.withUTF8 { bytes in try? OutputWriter(fd: 2).write(UnsafeRawBufferPointer(bytes)) }
    }
}
