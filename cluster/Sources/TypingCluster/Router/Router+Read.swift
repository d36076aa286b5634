import Foundation

extension Router {
    /// Reads `fd` from `skip` bytes on and routes its lines until its end or a stop,
    /// framed as typingd frames its input (``RouterInput``).
    func read(_ fd: Int32, skip: Int) throws {
        var buffer = [UInt8](repeating: 0, count: Self.chunk)
        var tail = false
        if skip > 0 {
            var info = stat()
            fstat(fd, &info)
            var last: UInt8 = 0x0A
            if (info.st_mode & S_IFMT) == S_IFREG {
                let position = lseek(fd, off_t(skip), SEEK_CUR)
                if position < 0 || Int(position) > Int(info.st_size) {
                    throw RouterFailure.input("stdin (a file of \(info.st_size) bytes) ends before the checkpoint's byte \(configuration.inputOffset + skip): is it the same input?")
                }
                var byte: UInt8 = 0
                if pread(fd, &byte, 1, position - 1) == 1 { last = byte }
            } else {
                var left = skip
                while left > 0 {
                    let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min(left, $0.count)) }
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { throw RouterFailure.input("stdin ended \(left) bytes before the checkpoint's position: is it the same input?") }
                    left -= count
                    last = buffer[count - 1]
                }
            }
            tail = last != 0x0A
        }
        lock.lock()
        var input = RouterInput(maxLineBytes: maxLine, position: configuration.inputOffset + skip, lines: readLines,
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
            if stopNow { return }   // read but not routed: the position stays before it
            if count == 0 {
                finish(&input)
                return
            }
            // A too-long line is dropped as the framer reads it: each read costs its
            // own bytes, never the line's, and the loop comes back here as often.
            if rate <= 0 {
                _ = try buffer.withUnsafeBytes { try route(UnsafeRawBufferPointer(rebasing: $0[..<count]), input: &input) }
                continue
            }
            // Paced: slices of 10 ms worth of lines, each routed at its time.
            let step = max(1, Int(rate / 100))
            var start = 0
            while start < count {
                lock.lock(); let halt = stopping; lock.unlock()
                if halt {
                    return   // the rest of the block is not routed: the position stays here
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
