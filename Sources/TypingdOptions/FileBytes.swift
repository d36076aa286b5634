import Glibc
import TypingProtocol

/// Whole files as bytes, for the paths users give (`check`, `replay`): regular files
/// only (a FIFO, a device or a socket is refused at once, without reading or
/// blocking), of at most a given size; written by write-then-rename, so a failed
/// write never destroys what the file held.
///
/// A path is bytes: one found in a folder is opened by its bytes, UTF-8 or not.
/// Messages show paths as ``TextFormat/path(_:)`` writes them, escaped, on one line.
package enum FileBytes {
    /// Why a file could not be read or written: a message for a person.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String

        init(_ description: String) {
            self.description = description
        }
    }

    /// The most bytes a transcript file may have: 256 MiB.
    package static let maxBytes = 256 << 20

    /// True when something is at `path` (following symlinks).
    package static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// Opens `path` for reading if it is a regular file; the caller closes it.
    package static func openRegular(_ path: String) throws(Failure) -> Int32 {
        try openRegular(bytes: Array(path.utf8))
    }

    /// Opens the file whose path is the bytes `path` for reading if it is a regular
    /// file; the caller closes it.
    package static func openRegular(bytes path: [UInt8]) throws(Failure) -> Int32 {
        let shown = TextFormat.path(path)
        guard !path.contains(0) else { throw Failure("cannot read \(shown): a path holds no NUL byte") }
        // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
        let fd = (path + [0]).withUnsafeBytes { raw in
            raw.baseAddress.map { open($0.assumingMemoryBound(to: CChar.self), O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
                ?? -1
        }
        guard fd >= 0 else { throw Failure("cannot read \(shown): \(String(cString: strerror(errno)))") }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let error = errno
            close(fd)
            throw Failure("cannot read \(shown): \(String(cString: strerror(error)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw Failure("cannot read \(shown): it is \(describe(status.st_mode)), not a regular file")
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        return fd
    }

    /// The bytes of the regular file at `path`, at most `limit` of them.
    package static func read(_ path: String, limit: Int = maxBytes) throws(Failure) -> [UInt8] {
        try read(bytes: Array(path.utf8), limit: limit)
    }

    /// The bytes of the regular file whose path is the bytes `path`, at most
    /// `limit` of them.
    package static func read(bytes path: [UInt8], limit: Int = maxBytes) throws(Failure) -> [UInt8] {
        let fd = try openRegular(bytes: path)
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                let error = errno
                throw Failure("cannot read \(TextFormat.path(path)): \(String(cString: strerror(error)))")
            }
            guard bytes.count + count <= limit else {
                throw Failure(
                    "cannot read \(TextFormat.path(path)): it is longer than \(limit) bytes, the most typingd reads whole"
                )
            }
            bytes += chunk[0..<count]
        }
    }

    /// Replaces the file at `path` by `bytes`: they are written to a new file beside
    /// it, flushed to disk, and renamed over it, so that on any failure (a full disk)
    /// the old file stays as it was.
    ///
    /// Only a regular file is replaced: a path that names a device, a FIFO, a
    /// folder or a socket is refused (renaming over `/dev/null` would put a file in
    /// its place), and a symlink is followed, so the file it points to is replaced
    /// and the link stays.
    package static func write(_ bytes: [UInt8], to path: String) throws(Failure) {
        var path = path
        var existing = stat()
        if lstat(path, &existing) == 0 {
            if existing.st_mode & S_IFMT == S_IFLNK {
                guard let resolved = realpath(path, nil) else {
                    let error = errno
                    throw Failure(
                        "cannot write \(TextFormat.path(path)): it is a symlink to nothing (\(String(cString: strerror(error))))"
                    )
                }
                path = String(cString: resolved)
                free(resolved)
                guard stat(path, &existing) == 0 else {
                    let error = errno
                    throw Failure("cannot write \(TextFormat.path(path)): \(String(cString: strerror(error)))")
                }
            }
            guard existing.st_mode & S_IFMT == S_IFREG else {
                throw Failure(
                    "cannot write \(TextFormat.path(path)): it is \(describe(existing.st_mode)), not a regular file; typingd replaces only regular files"
                )
            }
        }
        var template = Array((path + ".XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        guard fd >= 0 else {
            let error = errno
            throw Failure("cannot write \(TextFormat.path(path)): \(String(cString: strerror(error)))")
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var done = false
        defer {
            close(fd)
            if !done { unlink(temporary) }
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                raw.baseAddress.map { Glibc.write(fd, $0 + offset, raw.count - offset) } ?? 0
            }
            if written < 0 {
                if errno == EINTR { continue }
                let error = errno
                throw Failure("cannot write \(TextFormat.path(path)): \(String(cString: strerror(error)))")
            }
            offset += written
        }
        var status = stat()
        let mode: mode_t = stat(path, &status) == 0 ? status.st_mode & 0o7777 : 0o644
        guard fchmod(fd, mode) == 0, fsync(fd) == 0 else {
            let error = errno
            throw Failure("cannot write \(TextFormat.path(path)): \(String(cString: strerror(error)))")
        }
        guard rename(temporary, path) == 0 else {
            let error = errno
            throw Failure("cannot write \(TextFormat.path(path)): \(String(cString: strerror(error)))")
        }
        done = true
    }

    /// "a FIFO", "a directory", …
    package static func describe(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return "not a regular file"
        }
    }
}
