import Glibc

/// Why reading stdin or writing stdout stopped.
enum IOFailure: Error {
    /// The reader of stdout went away (EPIPE): stop quietly, exit 0.
    case readerGone
    /// Any other I/O error: a message on stderr, exit 74.
    case failed(operation: String, errno: Int32)

    /// The line written to stderr.
    var message: String {
        switch self {
        case .readerGone:
            return "typingd: stdout was closed by its reader"
        case let .failed(operation, code):
            return "typingd: cannot \(operation): \(String(cString: strerror(code)))"
        }
    }
}
