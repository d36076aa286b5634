import Glibc

/// Checks fds 0–2 before anything else opens a descriptor (which would get the
/// lowest free number: a signalfd read as input, or events written into one).
enum StandardDescriptors {
    /// Fails for a closed stdin or stdout; gives a closed stderr /dev/null.
    static func check() throws(IOFailure) {
        if fcntl(2, F_GETFD) == -1 {
            let fd = open("/dev/null", O_WRONLY)
            if fd >= 0 && fd != 2 { close(fd) }
        }
        if fcntl(0, F_GETFD) == -1 { throw .failed(operation: "read stdin", errno: EBADF) }
        if fcntl(1, F_GETFD) == -1 { throw .failed(operation: "write stdout", errno: EBADF) }
    }
}
