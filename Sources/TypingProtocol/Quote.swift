/// Quotes user-supplied text for error messages, shortening what is long.
enum Quote {
    /// The most characters of quoted text shown in a message.
    static let maxCharacters = 40

    /// `"text"`, or `"the first 40 characters..."`.
    static func string(_ text: String) -> String {
        if text.count <= maxCharacters { return "\"" + text + "\"" }
        return "\"" + text.prefix(maxCharacters) + "...\""
    }

    /// Quotes UTF-8 bytes (invalid sequences become U+FFFD).
    static func bytes(_ bytes: UnsafeRawBufferPointer) -> String {
        string(String(decoding: bytes.prefix(4 * maxCharacters + 4), as: UTF8.self))
    }
}
