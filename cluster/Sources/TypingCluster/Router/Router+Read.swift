import Foundation

extension Router {
    /// Moves `fd` (stdin, at input byte ``Options/inputOffset``) `skip` bytes on,
    /// to the checkpoint's byte: a regular file is seeked, a pipe has the bytes
    /// read. The input's first bytes are kept on the way (``InputHead``: read at
    /// once from a file, from the skipped bytes of a pipe) and, when the
    /// checkpoint kept them (`kept`), compared: another input is refused before
    /// anything is stored. Returns whether the byte before is not a LF.
    func position(_ fd: Int32, skip: Int, kept: InputHead.Identity?, lines: Int) throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: Self.chunk)
        var info = stat()
        fstat(fd, &info)
        let isFile = (info.st_mode & S_IFMT) == S_IFREG
        var last: UInt8 = 0x0A
        var found = InputHead()
        if isFile && configuration.inputOffset == 0 {
            let start = lseek(fd, 0, SEEK_CUR)
            if start >= 0 {
                let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, InputHead.limit, start) }
                if count > 0 {
                    buffer.withUnsafeBytes { found.take(UnsafeRawBufferPointer(rebasing: $0[..<count]), at: 0) }
                }
            }
        }
        if skip > 0 {
            if isFile {
                let position = lseek(fd, off_t(skip), SEEK_CUR)
                if position < 0 || Int(position) > Int(info.st_size) {
                    throw RouterFailure.checkpoint(
                        differentInput(
                            "stdin, a file of \(info.st_size) bytes, ends before the checkpoint's byte \(configuration.inputOffset + skip)",
                            skip: skip, lines: lines))
                }
                var byte: UInt8 = 0
                if pread(fd, &byte, 1, position - 1) == 1 { last = byte }
            } else {
                var left = skip
                while left > 0 {
                    let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min(left, $0.count)) }
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 {
                        throw RouterFailure.checkpoint(
                            differentInput(
                                "stdin ended \(left) bytes before the checkpoint's byte \(configuration.inputOffset + skip)",
                                skip: skip, lines: lines))
                    }
                    if configuration.inputOffset == 0 {
                        buffer.withUnsafeBytes {
                            found.take(UnsafeRawBufferPointer(rebasing: $0[..<count]), at: skip - left)
                        }
                    }
                    left -= count
                    last = buffer[count - 1]
                }
            }
        }
        if let kept, configuration.inputOffset == 0, !found.matches(kept) {
            throw RouterFailure.checkpoint(
                differentInput("its first \(kept.length) bytes are not this input's", skip: skip, lines: lines))
        }
        lock.lock()
        head = found
        lock.unlock()
        return last != 0x0A
    }

    /// Why stdin is not the input of the checkpoint, and what to do.
    func differentInput(_ why: String, skip: Int, lines: Int) -> String {
        "--name \(configuration.name) has a checkpoint of another input (stored through byte \(configuration.inputOffset + skip), "
            + "\(lines) lines): \(why). Nothing was stored. To resume that input, give it on stdin again; to route this "
            + "one, give it a new --name, or --new-input to route it whole under \(configuration.name), its lines numbered on "
            + "after those \(configuration.name) sent (--from-start re-sends the checkpoint's own input from its first byte)"
    }

    /// Reads `fd` (moved `skip` bytes on by ``position(_:skip:kept:lines:)``;
    /// `tail`: not at the start of a line) and routes its lines until its end or
    /// a stop, framed as typingd frames its input (``RouterInput``).
    func read(_ fd: Int32, skip: Int, tail: Bool) throws {
        var buffer = [UInt8](repeating: 0, count: Self.chunk)
        var at = configuration.inputOffset + skip
        lock.lock()
        var input = RouterInput(
            maxLineBytes: maxLine, position: configuration.inputOffset + skip, lines: readLines,
            afterLineFeed: !tail)
        lock.unlock()
        let rate = configuration.rate
        let pacedFrom = monotonicSeconds()
        var pacedLines = 0
        while true {
            lock.lock()
            while !stopping && parts.contains(where: { $0.pendingCount >= configuration.queueLines }) {
                readerWaiting = true
                _ = lock.wait(until: Date(timeIntervalSinceNow: 0.1))
            }
            readerWaiting = false
            let stop = stopping
            lock.unlock()
            if stop { return }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready == 0 || (ready < 0 && errno == EINTR) { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw RouterFailure.input("reading stdin: \(String(cString: strerror(errno)))")
            }
            lock.lock(); let stopNow = stopping; lock.unlock()
            if stopNow { return } // read but not routed: the position stays before it
            if count == 0 {
                finish(&input)
                return
            }
            if at < InputHead.limit {
                lock.lock()
                buffer.withUnsafeBytes { head.take(UnsafeRawBufferPointer(rebasing: $0[..<count]), at: at) }
                lock.unlock()
            }
            at += count
            // A too-long line is dropped as the framer reads it: each read costs its
            // own bytes, never the line's, and the loop comes back here as often.
            if rate <= 0 {
                _ = try buffer.withUnsafeBytes {
                    try route(UnsafeRawBufferPointer(rebasing: $0[..<count]), input: &input)
                }
                continue
            }
            // Paced: slices of 10 ms worth of lines, each routed at its time.
            let step = max(1, Int(rate / 100))
            var start = 0
            while start < count {
                lock.lock(); let halt = stopping; lock.unlock()
                if halt {
                    return // the rest of the block is not routed: the position stays here
                }
                let (consumed, lines) = try buffer.withUnsafeBytes {
                    try route(UnsafeRawBufferPointer(rebasing: $0[start..<count]), input: &input, pauseAfter: step)
                }
                start += consumed
                pacedLines += lines
                let ahead = Double(pacedLines) / rate - (monotonicSeconds() - pacedFrom)
                if ahead > 0 { pause(.seconds(ahead)) }
            }
        }
    }
}
