import CZlib
import Foundation

/// A line on stderr for the role `role`, written at once (one write, so lines of
/// several threads never mix).
public func clusterLog(_ role: String, _ text: String) {
    let line = Array("\(role): \(text)\n".utf8)
    line.withUnsafeBytes { bytes in
        var offset = 0
        while offset < bytes.count {
            let count = write(2, bytes.baseAddress! + offset, bytes.count - offset)
            if count <= 0 { if errno == EINTR { continue } else { return } }
            offset += count
        }
    }
}

/// Monotonic seconds.
public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Wall-clock milliseconds since 1970.
public func wallMilliseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int(now.tv_sec) * 1000 + Int(now.tv_nsec) / 1_000_000
}

/// This host's name (what a lease's and a router name's holder says).
func hostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    gethostname(&buffer, buffer.count - 1)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Sleeps `seconds` (not on a path that must notice anything meanwhile).
func pause(_ seconds: Double) {
    guard seconds > 0 else { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
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
        guard status == Z_STREAM_END else { throw Failure(description: "not a whole zlib stream (zlib status \(status))") }
        guard stream.avail_in == 0 else { throw Failure(description: "\(stream.avail_in) bytes after the end of its zlib stream") }
        return out
    }
}
