/// The optional `id` of a command, echoed in its reply so a client can match them.
///
/// The protocol allows a string of at most 256 bytes or an integer within ±(2^53−1);
/// the decoder enforces those limits, this type only carries the value.
public enum RequestID: Sendable, Equatable {
    /// A string id, echoed byte for byte.
    case string(String)
    /// An integer id, echoed as an integer.
    case integer(Int)

    /// Equal when both are integers of the same value or strings of the same bytes.
    public static func == (lhs: RequestID, rhs: RequestID) -> Bool {
        switch (lhs, rhs) {
        case let (.string(a), .string(b)): return a.sameBytes(as: b)
        case let (.integer(a), .integer(b)): return a == b
        default: return false
        }
    }
}
