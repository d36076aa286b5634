import CZlib

/// Which lines of a stored message a shard applies: the body decoded (inflated
/// when the router deflated it), then only the lines after the last one applied
/// from its router (headers `Typingd-Router` R and `Typingd-Lines` F: F is the
/// number, from 1, of the message's first line among all lines R sent to this
/// partition). A router restarted from an older checkpoint re-sends lines; they
/// are dropped here, however they were batched.
public struct Admission: Sendable, Equatable {
    /// Router name → the last of its line numbers applied (kept in the snapshot).
    public var routers: [String: Int] = [:]
    /// Line numbers a router skipped since ``takeGaps()`` was last called: lines
    /// it numbered for this partition that never reached the stream.
    var gaps: [Gap] = []

    /// Lines `first...last` of `router` missing: the router numbered them, the
    /// stream does not hold them.
    public struct Gap: Sendable, Equatable, CustomStringConvertible {
        public let router: String
        public let first: Int
        public let last: Int
        public var count: Int { last - first + 1 }
        public init(router: String, first: Int, last: Int) {
            self.router = router
            self.first = first
            self.last = last
        }
        public var description: String {
            "router \(router.debugDescription): line\(count == 1 ? " \(first)" : "s \(first)...\(last)") missing "
                + "(\(count) line\(count == 1 ? "" : "s") it numbered for this partition never reached the stream)"
        }
    }

    /// The gaps seen since the last call.
    public mutating func takeGaps() -> [Gap] {
        defer { gaps = [] }
        return gaps
    }

    public init(routers: [String: Int] = [:]) {
        self.routers = routers
    }

    public static func == (a: Admission, b: Admission) -> Bool { a.routers == b.routers }

    /// Why a body is not applied.
    public struct Undecodable: Error, CustomStringConvertible, Equatable {
        public let description: String
    }

    /// The lines to apply of a message with `headers` and `body` (each line ending
    /// in LF), and how many lines were dropped as applied before. `limit`: the most
    /// bytes a deflated body may inflate to (the servers' max payload).
    public mutating func admit(headers: [String: String], body: [UInt8], limit: Int) throws(Undecodable) -> (
        lines: [UInt8], dropped: Int
    ) {
        var data = try Self.decode(headers: headers, body: body, limit: limit)
        if !data.isEmpty && data.last != 0x0A { data.append(0x0A) }
        guard let router = headers[Names.Header.router], let firstText = headers[Names.Header.lines],
            let first = Int(firstText)
        else {
            return (data, 0)
        }
        var count = 0
        for byte in data where byte == 0x0A { count += 1 }
        let (last, overflow) = first.addingReportingOverflow(count - 1)
        if overflow { return (data, 0) }
        let done = routers[router] ?? 0
        if first > done {
            if first > done + 1 { gaps.append(Gap(router: router, first: done + 1, last: first - 1)) }
            routers[router] = last
            return (data, 0)
        }
        if last <= done { return ([], count) }
        // Lines first...done were applied: skip done - first + 1 of them.
        let skip = done - first + 1
        var index = 0
        var skipped = 0
        while skipped < skip, let newline = data[index...].firstIndex(of: 0x0A) {
            index = newline + 1
            skipped += 1
        }
        routers[router] = last
        return (Array(data[index...]), skip)
    }

    /// The body's lines: itself, or inflated when `Typingd-Encoding: deflate`.
    /// Refused: an unknown encoding, a body that does not inflate, inflates past
    /// `limit`, is cut short, or has bytes after its end.
    public static func decode(headers: [String: String], body: [UInt8], limit: Int) throws(Undecodable) -> [UInt8] {
        guard let encoding = headers[Names.Header.encoding] else { return body }
        guard encoding == "deflate" else {
            throw Undecodable(
                description: "unknown \(Names.Header.encoding) \(String(encoding.prefix(40)).debugDescription)")
        }
        return try inflate(body, limit: limit)
    }

    /// zlib-inflates `body`, at most `limit` bytes.
    static func inflate(_ body: [UInt8], limit: Int) throws(Undecodable) -> [UInt8] {
        enum Outcome { case done, tooLarge, cutShort, trailing(Int), bad(Int32) }
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Undecodable(description: "zlib does not start")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        output.reserveCapacity(min(limit, body.count * 8))
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let outcome: Outcome = body.withUnsafeBufferPointer { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = UInt32(input.count)
            while true {
                let result = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                if output.count + produced > limit { return .tooLarge }
                output.append(contentsOf: chunk[..<produced])
                switch result {
                case Z_STREAM_END:
                    return stream.avail_in > 0 ? .trailing(Int(stream.avail_in)) : .done
                case Z_OK:
                    if stream.avail_in == 0 && produced == 0 { return .cutShort }
                case Z_BUF_ERROR:
                    return .cutShort
                default:
                    return .bad(result)
                }
            }
        }
        switch outcome {
        case .done: return output
        case .tooLarge: throw Undecodable(description: "a deflated body of more than \(limit) bytes")
        case .cutShort: throw Undecodable(description: "a deflated body cut short")
        case .trailing(let count): throw Undecodable(description: "\(count) bytes after the end of a deflated body")
        case .bad(let status): throw Undecodable(description: "a deflated body that does not inflate (zlib \(status))")
        }
    }

    /// zlib-deflates `bytes` (for tests and snapshots).
    public static func deflate(_ bytes: [UInt8], level: Int32 = 1) -> [UInt8] {
        var size = compressBound(uLong(bytes.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        let status = out.withUnsafeMutableBufferPointer { outPointer in
            bytes.withUnsafeBufferPointer { inPointer in
                compress2(outPointer.baseAddress, &size, inPointer.baseAddress, uLong(bytes.count), level)
            }
        }
        guard status == Z_OK else { return [] }
        out.removeSubrange(Int(size)...)
        return out
    }
}
