import Foundation
import Glibc

/// Runs the built `typingd` binary as a subprocess.
enum Daemon {
    /// The binary: `$TYPINGD_BINARY`, else `typingd` next to the test bundle.
    ///
    /// Every test that starts typingd asks for this first, so it is also where
    /// the test process stops dying of SIGPIPE: a test that writes into a typingd
    /// that has exited (on purpose: EFBIG, a bad option) gets EPIPE instead. Tests
    /// run in parallel and in any order, so no single test may be the one to set it.
    static var binary: URL {
        Glibc.signal(SIGPIPE, SIG_IGN)
        if let path = ProcessInfo.processInfo.environment["TYPINGD_BINARY"] {
            return URL(fileURLWithPath: path)
        }
        let tests = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return tests.deletingLastPathComponent().appendingPathComponent("typingd")
    }

    /// A path in the temporary folder no other test, test case or test run uses:
    /// parameterized cases run at once in one process, so a name made of the pid
    /// and the arguments is shared, and one case's clean-up removes another's input
    /// before it is opened (CI saw it: one issue, no hang).
    static func temporaryFile(_ prefix: String, suffix: String = "") -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("typingd-\(prefix)-\(getpid())-\(UUID().uuidString)\(suffix)")
    }

    /// What a finished run produced.
    struct Run {
        var stdout: Data
        var stderr: Data
        var status: Int32
    }

    /// Runs typingd with `arguments`, stdin from `input`, and waits for it to exit
    /// (SIGTERM after `timeout` seconds, SIGKILL 2 s later: a hung typingd, as D1's
    /// was, may not even end on SIGTERM). `killed` tells whether it had to be.
    static func run(_ arguments: [String], input: URL, timeout: TimeInterval = 60, folder: URL? = nil) throws -> Run {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if let folder { process.currentDirectoryURL = folder }
        process.standardInput = try FileHandle(forReadingFrom: input)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { process.terminate() }
        let killer = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout + 2, execute: killer)
        let errors = ErrorCollector(err.fileHandleForReading)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        killer.cancel()
        return Run(stdout: stdout, stderr: errors.finish(), status: process.terminationStatus)
    }
}

/// Drains a pipe on another thread so a chatty stderr cannot block the child.
final class ErrorCollector: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    init(_ handle: FileHandle) {
        DispatchQueue.global().async {
            self.data = handle.readDataToEndOfFile()
            self.done.signal()
        }
    }

    func finish() -> Data {
        done.wait()
        return data
    }
}
