/// The sentence under the message list for a list of typers (§3 and §C).
///
/// With n typers of whom the first k are named (named typers are always listed
/// first), the style shows up to s names — group: s = n when n ≤ 3, else 2;
/// compact: s = n when n ≤ 2, else 1 — namely the first min(s, k); the r others
/// are counted:
///
/// | shown | r = 0 | r = 1 | r ≥ 2 |
/// |---|---|---|---|
/// | 0 | "" (n = 0) | Someone is typing... | {r} people are typing... |
/// | 1 | A is typing... | A and someone else are typing... | A and {r} others are typing... |
/// | 2 | A and B are typing... | A, B, and someone else are typing... | A, B, and {r} others are typing... |
/// | 3 | A, B, and C are typing... | — | — |
///
/// With every typer named this is the version 1 table.
enum Phrase {
    /// How many names the phrase for `count` typers, `named` of them named, shows.
    @inline(__always)
    static func shownNames(count: Int, named: Int, style: EngineConfiguration.Style) -> Int {
        let slots: Int
        switch style {
        case .group: slots = count <= 3 ? count : 2
        case .compact: slots = count <= 2 ? count : 1
        }
        return min(slots, named)
    }

    /// Appends the UTF-8 bytes of the phrase for `count` typers, the first `named`
    /// of them named, to `bytes`; `name(i)` is the display name of typer `i` (only
    /// the names shown are asked for).
    @inline(__always)
    static func append(count: Int, named: Int, style: EngineConfiguration.Style, into bytes: inout [UInt8],
                       name: (Int) -> String) {
        @inline(__always) func put(_ text: String) {
            var text = text
            text.withUTF8 { bytes.append(contentsOf: $0) }
        }
        @inline(__always) func put(_ text: StaticString) {
            text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        }
        guard count > 0 else { return }
        let shown = shownNames(count: count, named: named, style: style)
        let rest = count - shown
        switch (shown, rest) {
        case (0, 1):
            put(DisplayName.unknown)
            put(" is typing...")
        case (0, _):
            put(String(rest))
            put(" people are typing...")
        case (1, 0):
            put(name(0))
            put(" is typing...")
        case (2, 0):
            put(name(0))
            put(" and ")
            put(name(1))
            put(" are typing...")
        case (3, _):
            put(name(0))
            put(", ")
            put(name(1))
            put(", and ")
            put(name(2))
            put(" are typing...")
        default:
            // One or two names, and others counted after them.
            put(name(0))
            if shown == 2 {
                put(", ")
                put(name(1))
                put(",")
            }
            if rest == 1 {
                put(" and someone else are typing...")
            } else {
                put(" and ")
                put(String(rest))
                put(" others are typing...")
            }
        }
    }
}
