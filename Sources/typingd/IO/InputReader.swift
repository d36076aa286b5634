import Glibc

/// Reads raw bytes from a file descriptor with read(2): no decoding, no line
/// handling, so invalid UTF-8 and NUL bytes reach the framer untouched.
struct InputReader: ~Copyable {
    /// The descriptor read from.
    let fd: Int32
    /// The one buffer every read goes into.
    let buffer: UnsafeMutableRawBufferPointer

    /// The buffer's size: 64 KiB.
    static let defaultCapacity = 1 << 16

    /// A reader of `fd` with a buffer of `capacity` bytes.
    init(fd: Int32, capacity: Int = InputReader.defaultCapacity) {
        self.fd = fd
        self.buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        buffer.deallocate()
    }

    /// Reads what is available (waiting if nothing is); an empty result is the end
    /// of input. The bytes are valid until the next read.
    func read() throws(IOFailure) -> UnsafeRawBufferPointer {
        while true {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count >= 0 { return UnsafeRawBufferPointer(rebasing: buffer[0..<count]) }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                var pollfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&pollfd, 1, -1)
            default:
                throw .failed(operation: "read stdin", errno: errno)
            }
        }
    }
}
