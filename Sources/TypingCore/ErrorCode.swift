/// The `code` of an `error` event: why a line was not applied.
public enum ErrorCode: String, Sendable, CaseIterable {
    /// jansson rejected the line, or it holds a NUL byte, `\u0000` or invalid UTF-8.
    case badJSON = "bad_json"
    /// Valid JSON, but not an object.
    case notObject = "not_object"
    /// A required field is absent.
    case missingField = "missing_field"
    /// A field has the wrong type, size or range.
    case badField = "bad_field"
    /// `cmd` is a string but not a known command.
    case unknownCmd = "unknown_cmd"
    /// The user (or `by`) is not a member of the conversation.
    case notMember = "not_member"
    /// `at` is earlier than the current time.
    case timeBackwards = "time_backwards"
    /// `at` or `tick` was used in real clock mode.
    case clockMode = "clock_mode"
    /// The line is longer than `--max-line-bytes`.
    case lineTooLong = "line_too_long"
    /// A `join` would pass `--max-members`, `--max-conversations` or `--max-memberships`.
    case limit = "limit"
}
