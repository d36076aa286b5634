/// Why a typing streak ended.
public enum StopReason: String, Sendable, CaseIterable {
    /// No keystroke for the timeout.
    case timeout
    /// The input box was emptied (`type` with `empty: true`).
    case empty
    /// The user sent the message.
    case send
    /// The user left the conversation.
    case leave
    /// The user was removed from the conversation.
    case removed
    /// The user went offline.
    case offline
}
