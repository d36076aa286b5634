/// Turns the `name` a client gave into the name shown in phrases.
///
/// The rules, in order: remove control characters (U+0000–U+001F, U+007F–U+009F);
/// trim leading and trailing white space (Unicode's White_Space property); if
/// nothing is left, or there was no name, the user is unnamed (shown as ``unknown``
/// only when counted alone, Protocol.md#display-names); if more than
/// ``maxClusters`` extended grapheme clusters remain, keep the first ``maxClusters``,
/// trim trailing white space and append ``ellipsis``.
package enum DisplayName {
    /// The name of a user who has none, or whose name is only spaces and controls.
    static let unknown = "Someone"
    /// The most grapheme clusters a display name keeps.
    static let maxClusters = 15
    /// What a shortened name ends with.
    static let ellipsis = "..."

    /// The display name for `raw`, or nil when the user is unnamed: they gave no
    /// name, or nothing is left of it after cleaning.
    package static func render(_ raw: String?) -> String? {
        guard let raw else { return nil }
        return clean(raw).display
    }

    /// The display name for `raw` (nil: unnamed), and whether it is `raw` itself
    /// (nothing removed, trimmed or cut), told without comparing the two.
    static func clean(_ raw: String) -> (display: String?, asGiven: Bool) {
        if isPlainShortASCII(raw) { return (raw, true) }
        let all = raw.unicodeScalars
        var scalars = Substring.UnicodeScalarView(all.filter { !isControl($0) })
        var changed = scalars.count != all.count
        let before = scalars.count
        trimWhiteSpace(&scalars)
        changed = changed || scalars.count != before
        if scalars.isEmpty { return (nil, false) }
        let cleaned = String(scalars)
        guard cleaned.count > maxClusters else { return (cleaned, !changed) }
        var kept = Substring(cleaned.prefix(maxClusters)).unicodeScalars
        trimWhiteSpace(&kept)
        return (String(kept) + ellipsis, false)
    }

    /// True for the control characters a display name drops.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value <= 0x1F || (0x7F...0x9F).contains(scalar.value)
    }

    /// Drops white space from both ends of `scalars`.
    static func trimWhiteSpace(_ scalars: inout Substring.UnicodeScalarView) {
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
    }

    /// The common case that needs no work: at most 15 printable ASCII bytes, not
    /// starting or ending with a space. Such a name is its own display name.
    static func isPlainShortASCII(_ raw: String) -> Bool {
        let bytes = raw.utf8
        guard !bytes.isEmpty, bytes.count <= maxClusters,
              bytes.first != 0x20, bytes.last != 0x20 else { return false }
        return bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }
}
