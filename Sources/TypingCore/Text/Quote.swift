/// Quotes client-supplied text (ids, unknown command names) for error messages,
/// shortening what is long, so that a message stays readable and bounded whatever
/// the client sent.
package enum Quote {
    /// The most Unicode scalars of quoted text shown in a message. Text is cut
    /// between scalars, never inside one, and a cut is marked with `...`.
    package static let maxScalars = 40

    /// `"text"`, or `"the first 40 scalars..."`.
    package static func bytes(_ bytes: UnsafeRawBufferPointer) -> String {
        var scalars = 0, end = 0
        while end < bytes.count && scalars < maxScalars {
            end += 1
            // Skip the continuation bytes (10xxxxxx) of this scalar.
            while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
            scalars += 1
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
        return "\"" + text + (end < bytes.count ? "...\"" : "\"")
    }

    /// An id, quoted.
    package static func id(_ id: Identifier) -> String {
        id.withUnsafeBytes { bytes($0) }
    }
}

extension Quote {
    /// A string, quoted.
    package static func string(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
    }
}
