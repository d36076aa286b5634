import Foundation
import Glibc

/// A running typingd driven through pipes, for tests of the live process: write
/// commands, read event lines with a timeout, close stdin, send signals. One test
/// drives it, from one thread at a time (a writer thread only writes stdin).
final class LiveDaemon: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private var buffer: [UInt8] = []
    private var consumed = 0
    private var outputClosed = false
    private var errorCollector: ErrorCollector?

    /// Starts typingd with `arguments` (stdout goes to `stdout` when given), with
    /// `environment` added to the test's own.
    init(_ arguments: [String], stdout: FileHandle? = nil, environment: [String: String] = [:]) throws {
        Glibc.signal(SIGPIPE, SIG_IGN)
        process.executableURL = Daemon.binary
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardInput = input
        process.standardOutput = stdout ?? output
        process.standardError = errors
        try process.run()
        errorCollector = ErrorCollector(errors.fileHandleForReading)
    }

    /// A daemon that outlives its test is killed, so a regression fails the
    /// suite instead of hanging it (and a writer thread blocked on its stdin gets
    /// EPIPE).
    deinit {
        stop()
    }

    /// Kills typingd if it still runs (tests whose writer threads hold the daemon
    /// call this in a `defer`, as their deinit would come too late).
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Writes `lines`, each followed by LF.
    func send(_ lines: String...) throws {
        try input.fileHandleForWriting.write(contentsOf: Data(lines.map { $0 + "\n" }.joined().utf8))
    }

    /// Writes raw bytes.
    func send(bytes: [UInt8]) throws {
        try input.fileHandleForWriting.write(contentsOf: Data(bytes))
    }

    /// Ends typingd's input.
    func closeInput() throws {
        try input.fileHandleForWriting.close()
    }

    /// Stops reading typingd's output, like `head` exiting.
    func closeOutput() throws {
        outputClosed = true
        try output.fileHandleForReading.close()
    }

    /// The next event line, or nil if none arrives within `timeout` seconds (or at EOF).
    func readLine(timeout: Double = 5) -> String? {
        let end = Date().addingTimeInterval(timeout)
        while true {
            if let lf = buffer[consumed...].firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[consumed..<lf], as: UTF8.self)
                consumed = lf + 1
                if consumed > 1 << 16 {
                    buffer.removeSubrange(..<consumed)
                    consumed = 0
                }
                return line
            }
            let left = end.timeIntervalSinceNow
            if left <= 0 || !fill(upTo: 65_536, timeout: left) { return nil }
        }
    }

    /// Reads at most `count` bytes of output, waiting up to `timeout`; false at
    /// EOF or timeout.
    func fill(upTo count: Int, timeout: Double) -> Bool {
        let fd = output.fileHandleForReading.fileDescriptor
        var pollfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pollfd, 1, Int32(max(1, timeout * 1000))) > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: count)
        let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, count) }
        guard got > 0 else { return false }
        buffer.append(contentsOf: chunk[..<got])
        return true
    }

    /// Every remaining line until EOF (or `timeout` seconds).
    func readAll(timeout: Double = 20) -> [String] {
        let end = Date().addingTimeInterval(timeout)
        var lines: [String] = []
        while let line = readLine(timeout: end.timeIntervalSinceNow) { lines.append(line) }
        return lines
    }

    /// Sends `signal` to typingd.
    func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for typingd to exit; its status, or nil after `timeout` seconds.
    func waitForExit(timeout: Double = 20) -> Int32? {
        let end = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > end { return nil }
            usleep(2_000)
        }
        return process.terminationStatus
    }

    /// True while typingd runs.
    var isRunning: Bool { process.isRunning }

    /// Everything typingd wrote on stderr; a daemon still running is killed first
    /// (its stderr would never end).
    var stderr: String {
        stop()
        return String(decoding: errorCollector?.finish() ?? Data(), as: UTF8.self)
    }
}

/// The decoded JSON object of an event line.
func object(_ line: String?) -> [String: Any] {
    guard let line, let data = line.data(using: .utf8),
          let value = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
    return value
}
