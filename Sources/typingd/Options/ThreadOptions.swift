import ArgumentParser
import Glibc
import TypingdOptions
import TypingProtocol

/// The options of how input is read: how many threads parse it. They change only
/// the speed, never the output.
struct ThreadOptions: ParsableArguments {
    @Option(
        name: .customLong("threads"), parsing: .unconditional,
        help: ArgumentHelp(
            "Threads that parse input while it floods in, this one included (\(OptionRange.describe(ThreadOptions.threadRange)); 1: parse and apply on one thread). Only the speed changes.",
            valueName: "n"))
    var threadCount = ThreadCount.cores

    /// `--threads`: the number given, or the cores.
    var threads: Int { threadCount.value }

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The bytes typingd reads at a time (for testing: a small buffer makes every read a flood, which takes the threaded path).",
            valueName: "bytes", visibility: .hidden))
    var readBuffer = InputReader.defaultCapacity

    /// The values `--threads` may have.
    static let threadRange = 1...64

    /// The values `--read-buffer` may have.
    static let readBufferRange = 1...(1 << 24)

    func validate() throws {
        try OptionRange.check("--threads", threads, in: ThreadOptions.threadRange)
        try OptionRange.check("--read-buffer", readBuffer, in: ThreadOptions.readBufferRange)
    }
}

/// `--threads`' value. Its default, the processors online, is shown as
/// `(default: the number of cores)`: the count of the machine that built the manual
/// pages would be wrong on any other.
struct ThreadCount: ExpressibleByArgument {
    /// The number of threads.
    var value: Int
    /// True for the default, the number of cores.
    var isCores = false

    init?(argument: String) {
        guard let value = Int(argument: argument) else { return nil }
        self.value = value
    }

    private init(cores: Int) {
        value = cores
        isCores = true
    }

    /// The processors online, within ``ThreadOptions/threadRange``.
    static var cores: ThreadCount {
        ThreadCount(cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))).clamped(to: ThreadOptions.threadRange))
    }

    var defaultValueDescription: String { isCores ? "the number of cores" : String(value) }
}
