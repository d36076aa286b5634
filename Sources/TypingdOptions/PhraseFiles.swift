import Glibc
import TypingCore
import TypingProtocol

/// `--phrases PATH`: a phrase table file, or every `*.json` file of a folder, read
/// as ``FileBytes`` reads user-given paths (regular files only, bounded), each
/// checked by ``PhraseTableFile``.
///
/// A folder's file names are bytes, as the folder holds them: each file is opened
/// by its bytes, UTF-8 or not, and a message names it as ``TextFormat/path(_:)``
/// writes it (escaped, on one line).
public enum PhraseFiles {
    /// Why a table could not be loaded: the file and the key at fault, for a person.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A table, and the text it was read from (what a record keeps of it).
    package struct Loaded {
        package let table: PhraseTable
        /// The file's bytes: at most ``PhraseTableFile/maxBytes``.
        package let text: [UInt8]
    }

    /// The tables at `path` (relative to `folder` unless absolute; nil: the working
    /// directory): one for a file, one per `*.json` file for a folder, in byte
    /// order of their names.
    static func load(_ path: String, relativeTo folder: String?) throws(Failure) -> [Loaded] {
        let resolved = folder.map { path.hasPrefix("/") ? path : "\($0)/\(path)" } ?? path
        var status = stat()
        guard stat(resolved, &status) == 0 else {
            let error = errno
            throw Failure(description: "--phrases \(TextFormat.path(resolved)): \(String(cString: strerror(error)))")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            return [try table(at: Array(resolved.utf8))]
        }
        guard let directory = opendir(resolved) else {
            let error = errno
            throw Failure(description: "--phrases \(TextFormat.path(resolved)): \(String(cString: strerror(error)))")
        }
        var names: [[UInt8]] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name.count > 5 && name.starts(with: [UInt8](".".utf8)) == false
                && name.suffix(5).elementsEqual(".json".utf8)
            {
                names.append(name)
            }
        }
        closedir(directory)
        var tables: [Loaded] = []
        let folderBytes = Array(resolved.utf8) + [UInt8(ascii: "/")]
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            tables.append(try table(at: folderBytes + name))
        }
        return tables
    }

    /// The table in the file whose path is the bytes `path`, with the file's text.
    static func table(at path: [UInt8]) throws(Failure) -> Loaded {
        let bytes: [UInt8]
        do {
            bytes = try FileBytes.read(bytes: path, limit: PhraseTableFile.maxBytes)
        } catch {
            throw Failure(description: "--phrases \(error.description.replacingPrefix("cannot read ", with: ""))")
        }
        let result: Result<PhraseTable, PhraseTable.Error> = bytes.withUnsafeBytes { raw in
            Result { () throws(PhraseTable.Error) in try PhraseTableFile.decode(raw) }
        }
        switch result {
        case .success(let table): return Loaded(table: table, text: bytes)
        case .failure(let error): throw Failure(description: "--phrases \(TextFormat.path(path)): \(error)")
        }
    }
}

extension String {
    /// The string without `prefix` at its start, if it is there.
    func replacingPrefix(_ prefix: String, with replacement: String) -> String {
        hasPrefix(prefix) ? replacement + dropFirst(prefix.count) : self
    }
}
