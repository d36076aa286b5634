import Foundation
import Glibc
import Testing

/// The one way these tests run a program (typingd, a shell, python3, node, cc,
/// mandoc): started with its arguments, environment and folder, stdin given as bytes,
/// a file or a pipe the test writes, stdout read as it comes, stderr collected.
///
/// No test waits a fixed time. Every wait here waits for the thing itself (a line, some
/// output, the exit, a state of the process seen in /proc) until a deadline that is
/// generous for a loaded machine (``deadline``); when one passes, the process is killed
/// and the wait throws ``DeadlinePassed``, which fails the test with what the process
/// had written and what was awaited. A watchdog kills any process still running
/// ``lifetime`` seconds after it started, whatever the test is doing, so a test that
/// hangs elsewhere (a writer blocked on a full stdin) cannot hang the run.
///
/// One test drives a process, from one thread at a time; other threads may only write
/// its stdin (``send(bytes:)``, ``closeInput()``).
final class TestProcess: @unchecked Sendable {
    /// What the program reads on stdin.
    enum Input {
        /// /dev/null.
        case null
        /// A pipe the test writes with ``send(_:)`` and ends with ``closeInput()``.
        case pipe
        /// These bytes, written by a thread of their own, then the end of input.
        case bytes([UInt8])
        /// A file.
        case file(URL)
    }

    /// Where the program's stdout goes.
    enum Output {
        /// A pipe the test reads (``readLine(deadline:sourceLocation:)`` and the rest).
        case pipe
        /// /dev/null.
        case null
        /// An open file.
        case handle(FileHandle)
    }

    /// Where the program's stderr goes.
    enum ErrorOutput {
        /// A pipe collected in the background (``stderr``).
        case pipe
        /// /dev/null.
        case null
        /// The same pipe as stdout.
        case stdout
    }

    /// Seconds a wait may take before the test fails: far more than anything takes on
    /// a machine whose cores are all busy, so that only a hang reaches it.
    static let deadline: Double = 120

    /// Seconds after which a process still running is killed, whatever the test does.
    static let lifetime: Double = 600

    /// A wait whose deadline passed: the process was killed; the description says
    /// what was awaited, where, and what the process had written.
    struct DeadlinePassed: Error, CustomStringConvertible {
        let description: String
    }

    /// The command line, for messages.
    let commandLine: String
    private let process = Process()
    /// The process id.
    let pid: Int32
    private let inputPipe: Pipe?
    private let outputPipe: Pipe?
    private var outputOpen: Bool
    private var buffer: [UInt8] = []
    private var consumed = 0
    /// How many stdout bytes arrived in all, and the last lines consumed (for reports).
    private var received = 0
    private var recent: [String] = []
    /// Written by the termination handler: poll(2) wakes up on the exit.
    private let exitPipe: ExitPipe
    private var exitRead: Int32 { exitPipe.read }
    private let errorCollector: Collector?
    private let watchdog: DispatchWorkItem
    private let killedByWatchdog = Flag()

    /// Starts `executable` with `arguments`, `environment` added to the test's own
    /// (or, when `inheritEnvironment` is false, alone), in `directory`.
    init(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], inheritEnvironment: Bool = true,
        directory: URL? = nil, stdin: Input = .null, stdout: Output = .pipe, stderr: ErrorOutput = .pipe
    ) throws {
        // A test that writes into a program that has exited (on purpose: EFBIG, a bad
        // option) gets EPIPE instead of dying of SIGPIPE. Tests run in parallel and in
        // any order, so every start sets it.
        Glibc.signal(SIGPIPE, SIG_IGN)
        commandLine = ([executable.lastPathComponent] + arguments).map {
            $0.count > 60 ? String($0.prefix(57)) + "..." : $0
        }
        .joined(separator: " ")
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty || !inheritEnvironment {
            process.environment =
                inheritEnvironment
                ? ProcessInfo.processInfo.environment.merging(environment) { $1 } : environment
        }

        var bytesToWrite: [UInt8]?
        switch stdin {
        case .null:
            process.standardInput = FileHandle.nullDevice
            inputPipe = nil
        case .pipe:
            inputPipe = Pipe()
            process.standardInput = inputPipe
        case .bytes(let bytes):
            inputPipe = Pipe()
            process.standardInput = inputPipe
            bytesToWrite = bytes
        case .file(let url):
            process.standardInput = try FileHandle(forReadingFrom: url)
            inputPipe = nil
        }
        switch stdout {
        case .pipe:
            outputPipe = Pipe()
            process.standardOutput = outputPipe
        case .null:
            outputPipe = nil
            process.standardOutput = FileHandle.nullDevice
        case .handle(let handle):
            outputPipe = nil
            process.standardOutput = handle
        }
        outputOpen = outputPipe != nil
        let errorPipe: Pipe?
        switch stderr {
        case .pipe:
            errorPipe = Pipe()
            process.standardError = errorPipe
        case .null:
            errorPipe = nil
            process.standardError = FileHandle.nullDevice
        case .stdout:
            errorPipe = nil
            process.standardError = outputPipe ?? FileHandle.nullDevice
        }

        let exitPipe = try ExitPipe()
        self.exitPipe = exitPipe
        // The handler keeps the pipe open until it has run, however soon this goes.
        process.terminationHandler = { _ in exitPipe.signal() }
        // The program starts with no signal blocked, as from a shell. The child
        // inherits the mask of the thread that starts it, and the test's threads
        // (Dispatch's) block almost every signal: a program started so would get
        // EFBIG for a write past a file-size limit even if it left SIGXFSZ at its
        // default action, which kills it (FaultTests.fileSizeLimit).
        do {
            var blocked = sigset_t(), none = sigset_t()
            sigemptyset(&none)
            pthread_sigmask(SIG_SETMASK, &none, &blocked)
            defer { pthread_sigmask(SIG_SETMASK, &blocked, nil) }
            try process.run()
        }
        pid = process.processIdentifier
        errorCollector = errorPipe.map { Collector($0.fileHandleForReading) }
        let pid = pid, killed = killedByWatchdog
        watchdog = DispatchWorkItem {
            // Never a pid that has been given back: only while the exit is not seen.
            guard !exitPipe.isSignalled else { return }
            killed.set()
            kill(pid, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.lifetime, execute: watchdog)
        if let bytesToWrite, let inputPipe {
            Thread {
                try? inputPipe.fileHandleForWriting.write(contentsOf: Data(bytesToWrite))
                try? inputPipe.fileHandleForWriting.close()
            }.start()
        }
    }

    /// typingd (``Daemon/binary``) with `arguments`, stdin a pipe the test writes.
    static func typingd(
        _ arguments: [String], stdin: Input = .pipe, stdout: Output = .pipe,
        environment: [String: String] = [:]
    ) throws -> TestProcess {
        try TestProcess(Daemon.binary, arguments, environment: environment, stdin: stdin, stdout: stdout)
    }

    /// A process killed if it still runs: a regression fails its test instead of
    /// hanging the suite (and a writer thread blocked on its stdin gets EPIPE).
    deinit {
        stop()
        watchdog.cancel()
    }

    // MARK: Input

    /// Writes `lines`, each followed by LF.
    func send(_ lines: String...) throws {
        try send(lines: lines)
    }

    /// Writes `lines`, each followed by LF.
    func send(lines: [String]) throws {
        guard !lines.isEmpty else { return }
        try send(bytes: Array(lines.map { $0 + "\n" }.joined().utf8))
    }

    /// Writes raw bytes.
    func send(bytes: [UInt8]) throws {
        guard let inputPipe else { preconditionFailure("\(commandLine): stdin is not a pipe") }
        try inputPipe.fileHandleForWriting.write(contentsOf: Data(bytes))
    }

    /// Ends the program's input.
    func closeInput() throws {
        try inputPipe?.fileHandleForWriting.close()
    }

    // MARK: Output

    /// Stops reading the program's stdout, like `head` exiting.
    func closeOutput() throws {
        outputOpen = false
        try outputPipe?.fileHandleForReading.close()
    }

    /// The next line of stdout (without its LF), or nil at the end of output.
    func readLine(deadline: Double = TestProcess.deadline, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> String?
    {
        let end = Date().addingTimeInterval(deadline)
        while true {
            if let line = takeLine() { return line }
            if !outputOpen {
                guard consumed < buffer.count else { return nil }
                // The last line, without LF.
                return take(upTo: buffer.count, skipping: 0)
            }
            try pump(until: end, awaiting: "a line on stdout", sourceLocation: sourceLocation) { self.hasLine }
        }
    }

    /// Every remaining line of stdout, up to the end of output (the program exits or
    /// closes it).
    func readAll(deadline: Double = TestProcess.deadline, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> [String]
    {
        let end = Date().addingTimeInterval(deadline)
        var lines: [String] = []
        while let line = try readLine(deadline: end.timeIntervalSinceNow, sourceLocation: sourceLocation) {
            lines.append(line)
        }
        return lines
    }

    /// Reads stdout up to the first line for which `matches` is true, and returns it
    /// (the lines before it are read and dropped). Fails if the output ends first.
    @discardableResult
    func waitForLine(
        _ what: String, deadline: Double = TestProcess.deadline, sourceLocation: SourceLocation = #_sourceLocation,
        matching matches: (String) -> Bool
    ) throws -> String {
        let end = Date().addingTimeInterval(deadline)
        while let line = try readLine(deadline: end.timeIntervalSinceNow, sourceLocation: sourceLocation) {
            if matches(line) { return line }
        }
        throw failure("the output ended before \(what)", sourceLocation: sourceLocation)
    }

    /// Waits until the lines not read yet contain `text`, reading none of them.
    func waitForOutput(
        containing text: String, deadline: Double = TestProcess.deadline,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let end = Date().addingTimeInterval(deadline)
        let needle = Array(text.utf8)
        let found = { self.buffer[self.consumed...].firstRange(of: needle) != nil }
        while !found() {
            guard outputOpen else {
                throw failure(
                    "the output ended before it held \(text.debugDescription)", sourceLocation: sourceLocation)
            }
            try pump(until: end, awaiting: "\(text.debugDescription) on stdout", sourceLocation: sourceLocation, found)
        }
    }

    /// Everything the program wrote on stderr: all of it once it has exited (waiting
    /// for the pipe's end), what arrived so far while it runs.
    var stderr: String {
        guard let errorCollector else { return "" }
        return String(decoding: errorCollector.bytes(waitingForEnd: !process.isRunning), as: UTF8.self)
    }

    // MARK: The process

    /// True while the program runs.
    var isRunning: Bool { process.isRunning }

    /// Sends `signal` to the program.
    func signal(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Kills the program if it still runs.
    func stop() {
        if process.isRunning { kill(pid, SIGKILL) }
    }

    /// Waits for the program to exit and returns its exit status (or, killed by a
    /// signal, the signal's number: see ``terminationReason``). Meanwhile stdout is
    /// read into the buffer, so that a program with more to say does not block on a
    /// full pipe, unless `readingOutput` is false (a test of a blocked writer).
    @discardableResult
    func waitForExit(
        deadline: Double = TestProcess.deadline, readingOutput: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Int32 {
        let end = Date().addingTimeInterval(deadline)
        while !hasExited {
            try pump(until: end, awaiting: "the exit", reading: readingOutput, sourceLocation: sourceLocation) {
                self.hasExited
            }
        }
        process.waitUntilExit() // returns at once: the termination handler ran
        return process.terminationStatus
    }

    /// Whether the program exited or was killed by a signal (once it has ended).
    var terminationReason: Process.TerminationReason { process.terminationReason }

    /// Waits until `condition`, a state of the process that no pipe tells (a file it
    /// wrote, something /proc shows), holds: it is looked at again every millisecond
    /// or so. Fails if the program exits first.
    func waitUntil(
        _ what: String, deadline: Double = TestProcess.deadline, sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: () -> Bool
    ) throws {
        let end = Date().addingTimeInterval(deadline)
        while !condition() {
            if hasExited {
                throw failure(
                    "it exited (status \(process.terminationStatus)) before \(what)", sourceLocation: sourceLocation)
            }
            guard Date() < end else { throw failure("\(what) did not happen", sourceLocation: sourceLocation) }
            var exit = pollfd(fd: exitRead, events: Int16(POLLIN), revents: 0)
            _ = poll(&exit, 1, 1)
        }
    }

    /// True when the program waits on its stdout: the pipe is full (it holds its
    /// capacity, less at most PIPE_BUF bytes, which a small write needs free at once)
    /// because nobody reads it, and no thread of the program runs (each sleeps: in
    /// write(2), or in poll(2) as typingd waits for a full pipe, or on a lock).
    var isBlockedWritingOutput: Bool {
        guard let outputPipe, outputOpen else { return false }
        let fd = outputPipe.fileHandleForReading.fileDescriptor
        var queued: Int32 = 0
        let capacity = fcntl(fd, 1032 /* F_GETPIPE_SZ */)
        guard capacity > 0, ioctl(fd, 0x541B /* FIONREAD */, &queued) == 0,
            queued >= capacity - Int32(PIPE_BUF)
        else { return false }
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"), !tasks.isEmpty
        else {
            return false
        }
        return tasks.allSatisfy { task in
            // "TID (NAME) STATE ...": the state follows the name in parentheses.
            guard let stat = Self.procFile("/proc/\(pid)/task/\(task)/stat"), let close = stat.lastIndex(of: ")") else {
                return false
            }
            let state = stat[stat.index(after: close)...].split(separator: " ").first
            return state == "S" || state == "D"
        }
    }

    /// True when the program's main thread blocks `signal` (/proc/PID/status, SigBlk):
    /// typingd blocks the signals it handles first thing, before its signal thread runs.
    func blocks(_ signal: Int32) -> Bool {
        guard let mask = Self.blockedSignals(status: "/proc/\(pid)/status") else { return false }
        return mask & (1 << UInt64(signal - 1)) != 0
    }

    /// The signal mask (SigBlk: bit n - 1 for signal n) of each thread of the
    /// program, by thread id.
    var blockedSignalsByThread: [String: UInt64] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var masks: [String: UInt64] = [:]
        for task in tasks { masks[task] = Self.blockedSignals(status: "/proc/\(pid)/task/\(task)/status") }
        return masks
    }

    private static func blockedSignals(status path: String) -> UInt64? {
        guard let status = procFile(path),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") })
        else { return nil }
        return UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    }

    /// The bytes the program has read with read(2) and its kin so far (/proc/PID/io,
    /// rchar), 0 once it has exited.
    var bytesRead: Int {
        guard let io = Self.procFile("/proc/\(pid)/io"),
            let line = io.split(separator: "\n").first(where: { $0.hasPrefix("rchar:") })
        else { return 0 }
        return Int(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces)) ?? 0
    }

    private static func procFile(_ path: String) -> String? {
        (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .newlines)
    }

    // MARK: Running to the end

    /// What a program run to its end wrote, and how it ended.
    struct Run {
        var stdout: Data
        var stderr: Data
        var status: Int32
        var reason: Process.TerminationReason
        var output: String { String(decoding: stdout, as: UTF8.self) }
        var errors: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// Runs `executable` with `arguments` to its end.
    static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:],
        inheritEnvironment: Bool = true, directory: URL? = nil, stdin: Input = .null,
        stderr: ErrorOutput = .pipe, deadline: Double = TestProcess.deadline,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Run {
        let process = try TestProcess(
            executable, arguments, environment: environment, inheritEnvironment: inheritEnvironment,
            directory: directory, stdin: stdin, stderr: stderr)
        let end = Date().addingTimeInterval(deadline)
        let status = try process.waitForExit(deadline: deadline, sourceLocation: sourceLocation)
        // The rest of stdout: the pipe ends once every holder of its write end has
        // (a child the program started in the background may keep it open).
        while process.outputOpen {
            try process.pump(until: end, awaiting: "the end of stdout", sourceLocation: sourceLocation) {
                !process.outputOpen
            }
        }
        return Run(
            stdout: Data(process.buffer[process.consumed...]),
            stderr: process.errorCollector?.bytes(waitingForEnd: true) ?? Data(),
            status: status, reason: process.terminationReason)
    }

    /// Runs typingd with `arguments` to its end.
    static func run(_ arguments: [String], stdin: Input = .null, directory: URL? = nil) throws -> Run {
        try run(Daemon.binary, arguments, directory: directory, stdin: stdin)
    }

    // MARK: Waiting

    /// The read end of stdout, while it is open.
    private var outputFD: Int32 { outputPipe?.fileHandleForReading.fileDescriptor ?? -1 }

    private var hasExited: Bool { exitPipe.isSignalled }

    private var hasLine: Bool { buffer[consumed...].contains(0x0A) }

    /// Reads stdout (when `reading` and it is open) and watches for the exit until
    /// `done` holds, or until something changed that the caller must look at: the
    /// output ended while read, or the program exited while it is not. At `end`,
    /// kills the program and throws.
    private func pump(
        until end: Date, awaiting what: String, reading: Bool = true,
        sourceLocation: SourceLocation, _ done: () -> Bool
    ) throws {
        while !done() {
            let readable = reading && outputOpen
            if readable == false && hasExited { return }
            let left = end.timeIntervalSinceNow
            guard left > 0 else { throw failure("\(what) did not come", sourceLocation: sourceLocation) }
            var watched: [pollfd] = []
            if readable { watched.append(pollfd(fd: outputFD, events: Int16(POLLIN), revents: 0)) }
            let exited = hasExited
            if !exited { watched.append(pollfd(fd: exitRead, events: Int16(POLLIN), revents: 0)) }
            guard poll(&watched, nfds_t(watched.count), Int32(min(left * 1000 + 1, 60_000))) > 0 else { continue }
            if readable && watched[0].revents != 0 {
                fill(outputFD)
                if !outputOpen { return }
            }
        }
    }

    /// One read of stdout into the buffer; at its end, marks it closed.
    private func fill(_ fd: Int32) {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if got > 0 {
            buffer.append(contentsOf: chunk[..<got])
            received += got
        } else if got == 0 || (errno != EINTR && errno != EAGAIN) {
            outputOpen = false
        }
    }

    /// The next whole line of the buffer, if any.
    private func takeLine() -> String? {
        guard let lf = buffer[consumed...].firstIndex(of: 0x0A) else { return nil }
        return take(upTo: lf, skipping: 1)
    }

    private func take(upTo end: Int, skipping: Int) -> String {
        let line = String(decoding: buffer[consumed..<end], as: UTF8.self)
        consumed = end + skipping
        if consumed > 1 << 16 {
            buffer.removeSubrange(..<consumed)
            consumed = 0
        }
        recent.append(String(line.prefix(200)))
        if recent.count > 10 { recent.removeFirst(recent.count - 10) }
        return line
    }

    /// Kills the program and describes what was awaited and what it had done.
    private func failure(_ what: String, sourceLocation: SourceLocation) -> DeadlinePassed {
        let running = process.isRunning
        stop()
        var report =
            "\(commandLine) (pid \(pid)), waiting at \(sourceLocation.fileName):\(sourceLocation.line): \(what)"
        if killedByWatchdog.isSet {
            report += "; the watchdog killed it \(Int(Self.lifetime)) s after it started"
        } else if running {
            report += "; killed it"
        }
        report += ". It wrote \(received) bytes on stdout; the last lines read: \(recent)"
        report += "; not read yet: \(String(decoding: buffer[consumed...].prefix(400), as: UTF8.self).debugDescription)"
        if let errorCollector {
            report +=
                "; stderr: \(String(decoding: errorCollector.bytes(waitingForEnd: false).suffix(2000), as: UTF8.self).debugDescription)"
        }
        return DeadlinePassed(description: report)
    }
}

/// Reads a pipe to its end on a thread of its own, so that a chatty stderr cannot
/// block the program.
private final class Collector: @unchecked Sendable {
    private let condition = NSCondition()
    private var data = Data()
    private var ended = false

    init(_ handle: FileHandle) {
        Thread {
            while let chunk = try? handle.read(upToCount: 65_536), !chunk.isEmpty {
                self.condition.withLock { self.data += chunk }
            }
            self.condition.withLock {
                self.ended = true
                self.condition.broadcast()
            }
        }.start()
    }

    /// What arrived; with `waitingForEnd`, once the pipe has ended (at most
    /// ``TestProcess/deadline`` seconds).
    func bytes(waitingForEnd: Bool) -> Data {
        condition.withLock {
            let end = Date().addingTimeInterval(TestProcess.deadline)
            while waitingForEnd && !ended && condition.wait(until: end) {}
            return data
        }
    }
}

/// A pipe the termination handler writes a byte into: the exit as something poll(2)
/// waits for. Closed when the last of its holders (the process, the handler) goes.
private final class ExitPipe: Sendable {
    let read: Int32
    let write: Int32

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        // Not inherited by the program, nor by any other test's.
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        read = fds[0]
        write = fds[1]
    }

    func signal() {
        var byte: UInt8 = 1
        _ = Glibc.write(write, &byte, 1)
    }

    /// True once ``signal()`` was called.
    var isSignalled: Bool {
        var exit = pollfd(fd: read, events: Int16(POLLIN), revents: 0)
        return poll(&exit, 1, 0) > 0
    }

    deinit {
        close(read)
        close(write)
    }
}

/// A flag set once, read from any thread.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// The decoded JSON object of an event line.
func object(_ line: String?) -> [String: Any] {
    guard let line, let data = line.data(using: .utf8),
        let value = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return [:] }
    return value
}
