/// The sentence under the message list for a list of typers.
enum Phrase {
    /// The phrases, for typers A, B, C, … (n):
    ///
    /// | n | group | compact |
    /// |---|---|---|
    /// | 0 | "" | "" |
    /// | 1 | A is typing... | same |
    /// | 2 | A and B are typing... | same |
    /// | 3 | A, B, and C are typing... | A and 2 others are typing... |
    /// | ≥4 | A, B, and {n−2} others are typing... | A and {n−1} others are typing... |
    ///
    /// Appends the UTF-8 bytes of the phrase for `count` typers to `bytes`;
    /// `name(i)` is the display name of typer `i` (only the first three are asked).
    @inline(__always)
    static func append(count: Int, style: EngineConfiguration.Style, into bytes: inout [UInt8],
                       name: (Int) -> String) {
        @inline(__always) func put(_ text: String) {
            var text = text
            text.withUTF8 { bytes.append(contentsOf: $0) }
        }
        @inline(__always) func put(_ text: StaticString) {
            text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        }
        switch (count, style) {
        case (...0, _):
            return
        case (1, _):
            put(name(0))
            put(" is typing...")
        case (2, _):
            put(name(0))
            put(" and ")
            put(name(1))
            put(" are typing...")
        case (3, .group):
            put(name(0))
            put(", ")
            put(name(1))
            put(", and ")
            put(name(2))
            put(" are typing...")
        case (_, .group):
            put(name(0))
            put(", ")
            put(name(1))
            put(", and ")
            put(String(count - 2))
            put(" others are typing...")
        case (_, .compact):
            put(name(0))
            put(" and ")
            put(String(count - 1))
            put(" others are typing...")
        }
    }
}
