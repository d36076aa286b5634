/// Options written as words in a file: a transcript's `NAME.args`, a record's header.
///
/// Words are separated by white space (spaces, tabs, line breaks). A word may be
/// quoted with `"…"` or `'…'` to hold white space; inside double quotes and outside
/// quotes, a backslash takes the next character literally; inside single quotes
/// nothing is special. A `#` at the start of a word starts a comment to the end of
/// the line. So `--timeout-ms 500 --typing-events` and a file of one option per
/// line read the same; this is the subset of the shell's rules such files need.
package enum ArgumentWords {
    /// Why words could not be read: a message for a person.
    package struct Malformed: Error, CustomStringConvertible {
        package let description: String
    }

    /// The words of `text`.
    package static func split(_ text: String) throws(Malformed) -> [String] {
        var words: [String] = []
        var word = "", inWord = false
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t", "\n", "\r", "\r\n":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case "#" where !inWord:
                while let next = iterator.next(), next != "\n" && next != "\r\n" {}
            case "\\":
                guard let next = iterator.next() else { throw Malformed(description: "a backslash ends the text") }
                word.append(next)
                inWord = true
            case "'", "\"":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == character { closed = true; break }
                    if next == "\\" && character == "\"", let escaped = iterator.next() {
                        word.append(escaped)
                    } else {
                        word.append(next)
                    }
                }
                guard closed else { throw Malformed(description: "a quote (\(character)) is not closed") }
            default:
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return words
    }

    /// `word` as ``split(_:)`` reads it back: as it is when that is safe, else in
    /// double quotes with `"` and `\` escaped.
    package static func quote(_ word: String) -> String {
        if isPlain(word) { return word }
        var quoted = "\""
        for character in word {
            if character == "\"" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }

    /// True when `word` needs no quotes, here or in a POSIX shell: not empty, and
    /// only ASCII letters, digits and `-_./:=+,@%`.
    package static func isPlain(_ word: String) -> Bool {
        !word.isEmpty
            && word.unicodeScalars.allSatisfy { scalar in
                switch scalar {
                case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".", "/", ":", "=", "+", ",", "@", "%": return true
                default: return false
                }
            }
    }
}
