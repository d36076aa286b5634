import CZlib
import Foundation

// MARK: Clock

/// The cluster's one monotonic clock (every role's waits, deadlines and ages):
/// `ContinuousClock`, whose instants the rules take (``ConsumeState``), read as
/// numbers where a number is kept (an atomic deadline, a log's seconds).
let monotonicOrigin = ContinuousClock.now

/// Monotonic nanoseconds (since this process's first reading).
@inline(__always)
func monotonicNanos() -> Int64 {
    (ContinuousClock.now - monotonicOrigin).nanoseconds
}

/// Monotonic seconds (since this process's first reading).
public func monotonicSeconds() -> Double {
    Double(monotonicNanos()) / 1e9
}

/// Wall-clock milliseconds since 1970 (the partitions' time, stamps).
public func wallMilliseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int(now.tv_sec) * 1000 + Int(now.tv_nsec) / 1_000_000
}

extension Duration {
    /// This many milliseconds (fractions kept).
    public static func ms(_ milliseconds: Double) -> Duration { .nanoseconds(Int64((milliseconds * 1e6).rounded())) }

    /// In nanoseconds.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// In whole milliseconds (what nats.c's calls take).
    public var milliseconds: Int64 { nanoseconds / 1_000_000 }

    /// In seconds.
    public var seconds: Double { Double(nanoseconds) / 1e9 }
}

// MARK: Log

/// A line on stderr for the role `role` (`shard`, `router`, `gateway`, `ctl`): the
/// role, the local time to the millisecond, the text; written at once (one
/// write, so lines of several threads never mix).
public func clusterLog(_ role: String, _ text: String) {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    var seconds = spec.tv_sec
    var parts = tm()
    localtime_r(&seconds, &parts)
    let stamp = String(
        format: "%02d:%02d:%02d.%03d", parts.tm_hour, parts.tm_min, parts.tm_sec, spec.tv_nsec / 1_000_000)
    let line = Array("\(role): \(stamp) \(text)\n".utf8)
    line.withUnsafeBytes { bytes in
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let count = write(2, base + offset, bytes.count - offset)
            if count <= 0 { if errno == EINTR { continue } else { return } }
            offset += count
        }
    }
}

// MARK: Waiting

/// Sleeps `duration`, looking at `stop` every 50 ms at most: true when the time
/// passed, false as soon as `stop` says so.
@discardableResult
public func pause(_ duration: Duration, unless stop: () -> Bool = { false }) -> Bool {
    let end = ContinuousClock.now + duration
    while true {
        if stop() { return false }
        let left = ContinuousClock.now.duration(to: end)
        if left <= .zero { return true }
        let step = min(left, .milliseconds(50)).nanoseconds
        var request = timespec(tv_sec: Int(step / 1_000_000_000), tv_nsec: Int(step % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

// MARK: Signals

/// Takes SIGTERM and SIGINT (or `signals`) on a thread of its own, which calls
/// `handler` with each one's name as it comes. Call it before any connection is
/// made: the signals are blocked in this thread and every thread started after
/// (nats.c's among them), so none of those is ever interrupted or ended by one.
public func onSignals(_ signals: [Int32] = [SIGTERM, SIGINT], _ handler: @escaping @Sendable (String) -> Void) {
    var set = sigset_t()
    sigemptyset(&set)
    for number in signals { sigaddset(&set, number) }
    pthread_sigmask(SIG_BLOCK, &set, nil)
    let blocked = set
    let thread = Thread {
        var set = blocked
        var received: Int32 = 0
        while sigwait(&set, &received) == 0 {
            handler(received == SIGTERM ? "SIGTERM" : received == SIGINT ? "SIGINT" : "signal \(received)")
        }
    }
    thread.start()
}

/// This host's name (what a lease's and a router name's holder says).
func hostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    gethostname(&buffer, buffer.count - 1)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Bodies of stored lines: deflated (zlib) when that is smaller.
public enum Deflate {
    /// Bodies smaller than this are stored as they are.
    public static let from = 512

    /// `body` deflated at level 1, or nil when that is not smaller.
    public static func compress(_ body: [UInt8]) -> [UInt8]? {
        guard body.count >= from else { return nil }
        var size = compressBound(uLong(body.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        let status = out.withUnsafeMutableBufferPointer { target in
            body.withUnsafeBufferPointer { source in
                compress2(target.baseAddress, &size, source.baseAddress, uLong(source.count), 1)
            }
        }
        guard status == Z_OK, Int(size) < body.count else { return nil }
        out.removeSubrange(Int(size)...)
        return out
    }

    /// Why a body does not inflate.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// `body` inflated; refused when it is not a whole zlib stream, has bytes
    /// after its end, or inflates past `limit` bytes.
    public static func decompress(_ body: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure(description: "zlib did not start")
        }
        defer { inflateEnd(&stream) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var input = body
        let status: Int32 = input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            var status: Int32 = Z_OK
            while status == Z_OK {
                status = chunk.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                out.append(contentsOf: chunk[0..<produced])
                if out.count > limit { return -100 }
                if status == Z_BUF_ERROR && stream.avail_in == 0 { return Z_DATA_ERROR }
            }
            return status
        }
        if status == -100 { throw Failure(description: "inflates past \(limit) bytes") }
        guard status == Z_STREAM_END else {
            throw Failure(description: "not a whole zlib stream (zlib status \(status))")
        }
        guard stream.avail_in == 0 else {
            throw Failure(description: "\(stream.avail_in) bytes after the end of its zlib stream")
        }
        return out
    }
}
