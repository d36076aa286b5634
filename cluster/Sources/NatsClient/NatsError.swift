import CNats
#if canImport(Glibc)
import Glibc
#endif

/// A failed nats.c call: its status, JetStream's error code when the server gave
/// one, and nats.c's own words.
public struct NatsError: Error, CustomStringConvertible, Sendable {
    /// nats.c's status (`natsStatus`).
    public let status: UInt32
    /// JetStream's error code (`jsErrCode`), 0 when the server gave none.
    public let code: Int
    /// What failed, in nats.c's words.
    public let text: String

    init(_ status: natsStatus, code: jsErrCode = jsErrCode(rawValue: 0), doing what: String) {
        self.status = status.rawValue
        self.code = Int(code.rawValue)
        var last = NATS_OK
        let detail = nats_GetLastError(&last).map { String(cString: $0) } ?? ""
        let statusText = String(cString: natsStatus_GetText(status))
        var text = "\(what): \(statusText)"
        if !detail.isEmpty && detail != statusText { text += " (\(detail))" }
        if code.rawValue != 0 { text += " [JetStream error \(code.rawValue)]" }
        self.text = text
    }

    /// A failure of the caller's own making (a bad argument).
    public static func invalid(_ what: String) -> NatsError { NatsError(invalid: what) }

    /// A wrapper's own failure (a bad argument), with nats.c's status for it.
    init(invalid what: String) {
        status = NATS_INVALID_ARG.rawValue
        code = 0
        text = what
    }

    public var description: String { text }

    /// The call's deadline passed.
    public var isTimeout: Bool { status == NATS_TIMEOUT.rawValue }
    /// The thing asked for is not there (a key, a message, a stream, a consumer).
    public var isNotFound: Bool {
        status == NATS_NOT_FOUND.rawValue || code == 10037 || code == 10059 || code == 10014
    }
    /// A key-value create or update lost its race: the key exists, or its
    /// revision is not the one given (JetStream's "wrong last sequence").
    public var isWrongRevision: Bool { code == 10071 }
    /// JetStream 10005, "no suitable peers for placement": fewer servers with
    /// JetStream than the replicas asked, or some not yet known to the meta
    /// leader (a cluster just started).
    public var isNoPlacement: Bool { code == 10005 }
    /// Nobody listens on the subject asked (no JetStream there, no such service).
    public var isNoResponders: Bool { status == NATS_NO_RESPONDERS.rawValue }
    /// The connection is closed for good.
    public var isClosed: Bool { status == NATS_CONNECTION_CLOSED.rawValue }
}

@inline(__always)
func check(_ status: natsStatus, _ what: @autoclosure () -> String) throws(NatsError) {
    if status != NATS_OK { throw NatsError(status, doing: what()) }
}

@inline(__always)
func check(_ status: natsStatus, _ code: jsErrCode, _ what: @autoclosure () -> String) throws(NatsError) {
    if status != NATS_OK { throw NatsError(status, code: code, doing: what()) }
}

/// Runs `body` with C copies of `strings` (valid only during the call).
func withCStrings<R>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) throws(NatsError) -> R)
    throws(NatsError) -> R
{
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    var pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
    return try pointers.withUnsafeMutableBufferPointer { (buffer) throws(NatsError) -> R in
        guard let base = buffer.baseAddress else { throw NatsError(invalid: "an empty list") }
        return try body(base)
    }
}

/// `String.withCString` for a body that throws ``NatsError``.
func withC<R>(_ string: String, _ body: (UnsafePointer<CChar>) throws(NatsError) -> R) throws(NatsError) -> R {
    let result: Result<R, NatsError> = string.withCString { pointer in
        Result { () throws(NatsError) -> R in try body(pointer) }
    }
    return try result.get()
}
