import Foundation

extension Router {
    /// Reads `fd` from `skip` bytes on and routes its lines until its end or a stop.
    func read(_ fd: Int32, skip: Int) throws {
        var buffer = [UInt8](repeating: 0, count: Self.chunk)
        var rest: [UInt8] = []
        var tail = false
        if skip > 0 {
            var info = stat()
            fstat(fd, &info)
            var last: UInt8 = 0x0A
            if (info.st_mode & S_IFMT) == S_IFREG {
                let position = lseek(fd, off_t(skip), SEEK_CUR)
                if position < 0 || Int(position) > Int(info.st_size) {
                    throw RouterFailure.input("stdin (a file of \(info.st_size) bytes) ends before the checkpoint's byte \(options.inputOffset + skip): is it the same input?")
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
        let rate = options.rate
        let pacedFrom = monotonicSeconds()
        var pacedLines = 0
        while true {
            lock.lock()
            while !stopping && parts.contains(where: { $0.pendingCount >= options.queueLines }) {
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
                if tail && !rest.isEmpty && rest != [0x0D] { throw RouterFailure.input(Self.notALineStart) }
                if !rest.isEmpty && !tail {
                    rest.append(0x0A)
                    rest.withUnsafeBytes { route($0, lineCount: 1) }
                    // The LF was not in the input: the position is its real end.
                    lock.lock()
                    readOffset -= 1
                    segments[segments.count - 1].offset -= 1
                    lock.unlock()
                }
                return
            }
            rest.append(contentsOf: buffer[0..<count])
            if tail {
                // The line end the last line stored lacked: its bytes, no line of its own.
                if rest == [0x0D] { continue }
                let end = rest.starts(with: [0x0D, 0x0A]) ? 2 : rest.first == 0x0A ? 1 : 0
                if end == 0 { throw RouterFailure.input(Self.notALineStart) }
                tail = false
                lock.lock()
                readOffset += end
                segments.append((readOffset, readLines, parts.map(\.routed)))
                lock.unlock()
                rest.removeFirst(end)
            }
            guard let cut = rest.lastIndex(of: 0x0A) else { continue }
            let block = Array(rest[...cut])
            rest.removeFirst(cut + 1)
            if rate <= 0 {
                block.withUnsafeBytes { route($0, lineCount: $0.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }) }
                continue
            }
            // Paced: slices of 10 ms worth of lines, each routed at its time.
            let step = max(1, Int(rate / 100))
            var start = 0
            while start < block.count {
                lock.lock(); let halt = stopping; lock.unlock()
                if halt {
                    return   // the rest of the block is not routed: the position stays here
                }
                var end = start, lines = 0
                while end < block.count && lines < step {
                    if block[end] == 0x0A { lines += 1 }
                    end += 1
                }
                block[start..<end].withUnsafeBytes { route($0, lineCount: lines) }
                start = end
                pacedLines += lines
                let ahead = Double(pacedLines) / rate - (monotonicSeconds() - pacedFrom)
                if ahead > 0 { pause(ahead) }
            }
        }
    }
}
