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
    package static let maxClusters = 15
    /// What a shortened name ends with.
    package static let ellipsis = "..."

    /// The display name for `raw`, or nil when the user is unnamed: they gave no
    /// name, or nothing is left of it after cleaning.
    package static func render(_ raw: String?) -> String? {
        guard let raw else { return nil }
        return clean(raw).display
    }

    /// The display name for `raw` (nil: unnamed), and whether it is `raw` itself
    /// (nothing removed, trimmed or cut), told without comparing the two.
    package static func clean(_ raw: String) -> (display: String?, asGiven: Bool) {
        if isPlainShortASCII(raw) { return (raw, true) }
        // Work on the UTF-8 bytes and look at no more of the name than the rules
        // need: a name of any length costs one scan of its bytes (a long name once
        // made a join cost milliseconds, scalar by scalar through generic code).
        let (cleaned, removed) = withoutControls(raw)
        var scalars = Substring(cleaned).unicodeScalars
        let before = scalars.startIndex, after = scalars.endIndex
        trimWhiteSpace(&scalars)
        let changed = removed || scalars.startIndex != before || scalars.endIndex != after
        if scalars.isEmpty { return (nil, false) }
        // A String of its own, so that its clusters are counted from its start.
        let trimmed = changed ? String(scalars) : cleaned
        // The end of the first maxClusters clusters: only those are looked at.
        var end = trimmed.startIndex
        for _ in 0..<maxClusters where end < trimmed.endIndex { trimmed.formIndex(after: &end) }
        guard end < trimmed.endIndex else { return (trimmed, !changed) }
        var kept = trimmed[..<end].unicodeScalars
        trimWhiteSpace(&kept)
        return (String(kept) + ellipsis, false)
    }

    /// `raw` without its control characters (``isControl(_:)``), and whether any
    /// were there. Each is one whole scalar (C0 and DEL one byte, C1 the two bytes
    /// C2 80...C2 9F), so what is left is still valid UTF-8.
    static func withoutControls(_ raw: String) -> (String, Bool) {
        var copy = raw
        return copy.withUTF8 { bytes in
            /// The bytes of the control character at `i`: 0 when there is none.
            func control(at i: Int) -> Int {
                let b = bytes[i]
                if b < 0x20 || b == 0x7F { return 1 }
                return b == 0xC2 && i + 1 < bytes.count && bytes[i + 1] <= 0x9F ? 2 : 0
            }
            guard let first = bytes.indices.first(where: { control(at: $0) > 0 }) else { return (raw, false) }
            var kept = [UInt8](bytes[..<first])
            kept.reserveCapacity(bytes.count)
            var i = first
            while i < bytes.count {
                let length = control(at: i)
                if length == 0 { kept.append(bytes[i]); i += 1 } else { i += length }
            }
            return (String(decoding: kept, as: UTF8.self), true)
        }
    }

    /// True for the control characters a display name drops.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
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
            bytes.first != 0x20, bytes.last != 0x20
        else { return false }
        return bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }
}
