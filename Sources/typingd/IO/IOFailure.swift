import Glibc

/// Why reading stdin or writing stdout stopped.
enum IOFailure: Error {
    /// The reader of stdout went away (EPIPE): stop quietly, exit 0.
    case readerGone
    /// After a signal, the reader of stdout took nothing for a while: stop waiting
    /// for it, quietly, exit 0 (as for the signal).
    case stalled
    /// Any other I/O error: a message on stderr, exit 74.
    case failed(operation: String, errno: Int32)
}

extension IOFailure {
    /// The line for stderr, for the failures that get one.
    var message: String? {
        guard case let .failed(operation, code) = self else { return nil }
        return "typingd: cannot \(operation): \(String(cString: strerror(code)))"
    }
}
