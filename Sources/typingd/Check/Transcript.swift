import Glibc
import TypingProtocol

/// One golden transcript: `NAME.in.jsonl` (the input: commands, or a record made by
/// `typingd --record`), optional `NAME.args` (the options; a record carries its own)
/// and `NAME.out.jsonl` (the expected output, byte for byte).
package struct Transcript: Sendable, CustomStringConvertible {
    /// The path without `.in.jsonl`, as found (relative when the search path was).
    let stem: String

    package init(stem: String) { self.stem = stem }

    /// The stem as a report shows it: escaped, on one line (``TextFormat/path(_:)``).
    package var description: String { TextFormat.path(stem) }
    package var input: String { stem + ".in.jsonl" }
    package var expected: String { stem + ".out.jsonl" }
    package var arguments: String { stem + ".args" }
    /// The folder the files are in, without a final "/"; nil for the current one.
    var folder: String? { stem.lastIndex(of: "/").map { String(stem[..<$0]) } }

    /// A shell command that shows every difference: this typingd run on the input
    /// as check runs it (`words`: NAME.args's, nil without one), its output
    /// compared with `diff`, to be run from the folder check was run in. Nil when
    /// no command can: with `--clock real` (check stands the clock at 0, which no
    /// command line can ask for), and when a path or word holds a character a
    /// terminal would act on (the report escapes it, which would make the command
    /// name another file).
    package func seeAll(words: [String]?, recorded: Bool) -> String? {
        let typingd = CommandLine.arguments.first ?? "typingd"
        var run: [String]
        if recorded {
            run = [typingd, "replay", Self.pathWord(input)]
        } else {
            let words = words ?? []
            if words.contains(where: { $0 == "--clock=real" })
                || zip(words, words.dropFirst()).contains(where: { $0 == "--clock" && $1 == "real" })
            {
                return nil
            }
            let clock = words.contains { $0 == "--clock" || $0.hasPrefix("--clock=") } ? [] : ["--clock", "manual"]
            run = [typingd] + clock + relativePhrases(words)
        }
        let all = run + [input, expected]
        guard !all.contains(where: { $0.unicodeScalars.contains(where: TextFormat.isUnsafe) }) else { return nil }
        return run.map(Self.shellQuoted).joined(separator: " ")
            + (recorded ? "" : " < \(Self.shellQuoted(input))")
            + " | diff \(Self.shellQuoted(Self.pathWord(expected))) -"
    }

    /// `words` with each relative `--phrases` path made relative to the folder check
    /// was run in: check takes them from the transcript's folder.
    func relativePhrases(_ words: [String]) -> [String] {
        func moved(_ path: String) -> String { path.hasPrefix("/") ? path : folder.map { $0 + "/" + path } ?? path }
        var out: [String] = []
        var takesPath = false
        for word in words {
            if takesPath {
                out.append(moved(word))
                takesPath = false
            } else if word == "--phrases" {
                out.append(word)
                takesPath = true
            } else if word.hasPrefix("--phrases=") {
                out.append("--phrases=" + moved(String(word.dropFirst("--phrases=".count))))
            } else {
                out.append(word)
            }
        }
        return out
    }

    /// A relative path that starts with "-" gets "./", so that no command takes it
    /// for an option.
    static func pathWord(_ path: String) -> String {
        path.hasPrefix("-") ? "./" + path : path
    }

    /// `word` for a POSIX shell: as it is when safe, else in single quotes.
    package static func shellQuoted(_ word: String) -> String {
        ArgumentWords.isPlain(word)
            ? word : "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// Every transcript under `paths` (files named `*.in.jsonl`, or folders searched
    /// recursively, each folder once however many symlinks lead to it), sorted by
    /// path within each folder; a path that is neither is an error.
    package static func find(in paths: [String]) throws(CheckFailure) -> [Transcript] {
        var found: [Transcript] = []
        var visited = Set<FileID>()
        for path in paths {
            var status = stat()
            guard stat(path, &status) == 0 else {
                throw CheckFailure("no such file or folder: \(TextFormat.path(path))")
            }
            if status.st_mode & S_IFMT == S_IFDIR {
                found += try walk(path, visited: &visited).sorted { $0.stem < $1.stem }
            } else if path.hasSuffix(".in.jsonl") {
                found.append(Transcript(stem: String(path.dropLast(".in.jsonl".count))))
            } else {
                throw CheckFailure("\(TextFormat.path(path)) is not a transcript (NAME.in.jsonl) or a folder")
            }
        }
        return found
    }

    /// A file's identity: device and inode.
    struct FileID: Hashable {
        let device: UInt64
        let inode: UInt64

        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }

    /// The transcripts in folder `path` and its subfolders (hidden ones skipped),
    /// skipping folders already in `visited`: a symlink loop, or two links to one
    /// folder, is walked once.
    private static func walk(_ path: String, visited: inout Set<FileID>) throws(CheckFailure) -> [Transcript] {
        var status = stat()
        guard stat(path, &status) == 0, visited.insert(FileID(status)).inserted else { return [] }
        guard let directory = opendir(path) else { throw CheckFailure("cannot read folder \(TextFormat.path(path))") }
        defer { closedir(directory) }
        var found: [Transcript] = []
        while let entry = readdir(directory) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if bytes.first == UInt8(ascii: ".") { continue }
            let separator = path.hasSuffix("/") ? "" : "/"
            guard let name = String(validating: bytes, as: UTF8.self) else {
                // Not skipped in silence: a transcript or a folder of them would be lost.
                var raw = Array((path + separator).utf8) + bytes
                raw.append(0)
                var status = stat()
                let found = raw.withUnsafeBytes { bytes in
                    bytes.baseAddress.map { stat($0.assumingMemoryBound(to: CChar.self), &status) } ?? -1
                }
                let isFolder = found == 0 && status.st_mode & S_IFMT == S_IFDIR
                if isFolder || bytes.reversed().starts(with: Array(".in.jsonl".utf8).reversed()) {
                    throw CheckFailure(
                        "\(TextFormat.path(Array((path + separator).utf8) + bytes)): a \(isFolder ? "folder" : "transcript") whose name is not UTF-8, which check cannot name in its report: rename it"
                    )
                }
                continue
            }
            let child = path + separator + name
            var status = stat()
            guard stat(child, &status) == 0 else {
                // A dangling symlink named like a transcript: it fails when read, loudly.
                if name.hasSuffix(".in.jsonl") {
                    found.append(Transcript(stem: String(child.dropLast(".in.jsonl".count))))
                }
                continue
            }
            if status.st_mode & S_IFMT == S_IFDIR {
                found += try walk(child, visited: &visited)
            } else if name.hasSuffix(".in.jsonl") {
                found.append(Transcript(stem: String(child.dropLast(".in.jsonl".count))))
            }
        }
        return found
    }
}

/// Why `typingd check` could not check: a message for the user.
package struct CheckFailure: Error, CustomStringConvertible {
    package let description: String

    init(_ description: String) {
        self.description = description
    }
}
