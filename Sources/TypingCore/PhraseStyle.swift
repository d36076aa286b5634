/// How an indicator names more than two typers.
public enum PhraseStyle: String, Sendable, CaseIterable {
    /// "A, B, and C are typing...", "A, B, and 2 others are typing..." (the default).
    case group
    /// "A and 2 others are typing..."
    case compact
}
