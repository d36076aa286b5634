/// The sentence under the message list for a list of typers.
public enum Phrase {
    /// The phrase for `count` typers whose first display names are `names`.
    ///
    /// `names` must hold the display names of the first `min(count, 3)` typers in
    /// streak order (more are ignored). The phrases, for typers A, B, C, … (n):
    ///
    /// | n | group | compact |
    /// |---|---|---|
    /// | 0 | "" | "" |
    /// | 1 | A is typing... | same |
    /// | 2 | A and B are typing... | same |
    /// | 3 | A, B, and C are typing... | A and 2 others are typing... |
    /// | ≥4 | A, B, and {n−2} others are typing... | A and {n−1} others are typing... |
    public static func text(count: Int, names: [String], style: PhraseStyle) -> String {
        precondition(names.count >= min(count, 3), "Phrase.text needs the first names")
        switch (count, style) {
        case (...0, _):
            return ""
        case (1, _):
            return names[0] + " is typing..."
        case (2, _):
            return names[0] + " and " + names[1] + " are typing..."
        case (3, .group):
            return names[0] + ", " + names[1] + ", and " + names[2] + " are typing..."
        case (_, .group):
            return names[0] + ", " + names[1] + ", and " + String(count - 2) + " others are typing..."
        case (_, .compact):
            return names[0] + " and " + String(count - 1) + " others are typing..."
        }
    }
}
