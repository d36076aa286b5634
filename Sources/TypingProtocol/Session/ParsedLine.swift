import TypingCore

/// What parsing made of one framed input line: the step between framing and the
/// engine, the same whether the line was parsed on this thread or in a
/// ``ParsingPool``.
@usableFromInline
enum ParsedLine: Sendable {
    /// Only spaces and tabs, or nothing: skipped.
    case blank
    /// A command to apply.
    case request(Request)
    /// A line that is not a valid command: its error.
    case refused(Event.Error)
    /// A line longer than the limit, skipped unread.
    case tooLong(number: Int, limit: Int)

    /// Parses line `number` (without LF or its trailing CR).
    @inlinable
    init(_ line: UnsafeRawBufferPointer, number: Int, decoder: CommandDecoder) {
        if ParsedLine.isBlank(line) {
            self = .blank
            return
        }
        do throws(Event.Error) {
            self = .request(try decoder.decode(line, number: number))
        } catch {
            self = .refused(error)
        }
    }

    /// True for a line of only spaces and tabs (or nothing).
    @inlinable
    static func isBlank(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }

    /// The error of a line over `limit` bytes.
    @usableFromInline
    static func tooLongError(number: Int, limit: Int) -> Event.Error {
        Event.Error(
            line: number, code: .lineTooLong,
            message:
                "line \(number) is longer than \(limit) \(limit == 1 ? "byte" : "bytes") (--max-line-bytes); it was skipped"
        )
    }
}
