import Glibc

/// One golden transcript: `NAME.in.jsonl` (the input), optional `NAME.args` (the
/// options) and `NAME.out.jsonl` (the expected output, byte for byte).
struct Transcript: Sendable, CustomStringConvertible {
    /// The path without `.in.jsonl`, as found (relative when the search path was).
    let stem: String

    var description: String { stem }
    var input: String { stem + ".in.jsonl" }
    var expected: String { stem + ".out.jsonl" }
    var arguments: String { stem + ".args" }

    /// Every transcript under `paths` (files named `*.in.jsonl`, or folders searched
    /// recursively), sorted by path within each folder; a path that is neither is
    /// an error.
    static func find(in paths: [String]) throws(CheckFailure) -> [Transcript] {
        var found: [Transcript] = []
        for path in paths {
            var status = stat()
            guard stat(path, &status) == 0 else {
                throw CheckFailure("no such file or folder: \(path)")
            }
            if status.st_mode & S_IFMT == S_IFDIR {
                found += try walk(path).sorted { $0.stem < $1.stem }
            } else if path.hasSuffix(".in.jsonl") {
                found.append(Transcript(stem: String(path.dropLast(".in.jsonl".count))))
            } else {
                throw CheckFailure("\(path) is not a transcript (NAME.in.jsonl) or a folder")
            }
        }
        return found
    }

    /// The transcripts in folder `path` and its subfolders (hidden ones skipped).
    private static func walk(_ path: String) throws(CheckFailure) -> [Transcript] {
        guard let directory = opendir(path) else { throw CheckFailure("cannot read folder \(path)") }
        defer { closedir(directory) }
        var found: [Transcript] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(".") { continue }
            let child = path.hasSuffix("/") ? path + name : path + "/" + name
            var status = stat()
            guard stat(child, &status) == 0 else { continue }
            if status.st_mode & S_IFMT == S_IFDIR {
                found += try walk(child)
            } else if name.hasSuffix(".in.jsonl") {
                found.append(Transcript(stem: String(child.dropLast(".in.jsonl".count))))
            }
        }
        return found
    }
}

/// The `.args` file of a transcript: the options typingd runs it with.
///
/// Options are separated by white space (spaces, tabs, line breaks). A word may be
/// quoted with `"…"` or `'…'` to hold white space; inside double quotes and outside
/// quotes, a backslash takes the next character literally; inside single quotes
/// nothing is special. A `#` at the start of a word starts a comment to the end of
/// the line. So `--timeout-ms 500 --typing-events` and a file of one option per
/// line read the same; this is the subset of the shell's rules the files need.
enum ArgumentsFile {
    /// The words of `text`.
    static func words(_ text: String) throws(CheckFailure) -> [String] {
        var words: [String] = []
        var word = "", inWord = false
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t", "\n", "\r":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case "#" where !inWord:
                while let next = iterator.next(), next != "\n" {}
            case "\\":
                guard let next = iterator.next() else { throw CheckFailure("a backslash ends the file") }
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
                guard closed else { throw CheckFailure("a quote (\(character)) is not closed") }
            default:
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return words
    }
}

/// Why `typingd check` could not check: a message for the user.
struct CheckFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
