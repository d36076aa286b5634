import Testing
import TypingCore
import TypingProtocol

/// The input pipeline (framing into batches, parsing on other threads, applying in
/// order) against the plain session, on inputs that end exactly where a read ends:
/// the last read fills the buffer and the ring of batches is full at the end of
/// input.
@Suite("Input pipeline", .timeLimit(.minutes(2)))
struct InputPipelineTests {
    /// Lines of a small conversation (keystrokes, replies, bad lines), about `bytes` long.
    static func input(bytes: Int) -> [UInt8] {
        var lines: [String] = [
            #"{"cmd":"join","conv":"g","user":"a","name":"Ann"}"#,
            #"{"cmd":"join","conv":"g","user":"b","name":"Bo"}"#
        ]
        var at = 0
        var text = lines.joined(separator: "\n") + "\n"
        while text.utf8.count < bytes - 64 {
            at += 7
            let line = [
                #"{"cmd":"type","conv":"g","user":"a","at":\#(at)}"#,
                #"{"cmd":"stats","id":\#(at)}"#, "not json",
                #"{"cmd":"type","conv":"g","user":"b","at":\#(at + 1)}"#
            ][at % 4]
            lines.append(line)
            text += line + "\n"
        }
        return Array(text.utf8)
    }

    /// An input of exactly `size` bytes: lines, then spaces on a last blank line.
    static func exact(_ size: Int) -> [UInt8] {
        var bytes = input(bytes: size)
        if bytes.count > size { bytes = Array(bytes[..<size]) }
        while bytes.count < size { bytes.append(0x20) }
        return bytes
    }

    /// The output of `input` through a plain session fed in `read`-byte chunks, each
    /// (with the real clock) at time 10 × its number.
    static func plain(_ input: [UInt8], clock: SessionConfiguration.Clock, read: Int) -> [UInt8] {
        var session = Session(configuration: SessionConfiguration(clock: clock), sink: [UInt8]())
        var offset = 0, chunk = 0
        while offset < input.count {
            let end = min(input.count, offset + read)
            chunk += 1
            if clock == .real { session.advance(to: 10 * chunk) }
            _ = input[offset..<end].withUnsafeBytes { session.feed($0) }
            offset = end
        }
        session.finish()
        if clock == .real { while let deadline = session.nextDeadline() { session.advance(to: deadline) } }
        session.flush()
        return session.sink
    }

    /// The same through the pipeline with `threads` threads: every read that fills
    /// the buffer is a flood, and batches are small, so the ring fills up.
    static func piped(_ input: [UInt8], clock: SessionConfiguration.Clock, read: Int, threads: Int) throws -> [UInt8] {
        var configuration = SessionConfiguration(clock: clock)
        configuration.checksInvariants = true
        var pipeline = try InputPipeline(
            session: Session(configuration: configuration, sink: [UInt8]()),
            threads: threads, batchLines: 3, batchBytes: 64)
        var offset = 0, chunk = 0
        while offset < input.count {
            let end = min(input.count, offset + read)
            chunk += 1
            if clock == .real && pipeline.isIdle { pipeline.session.advance(to: 10 * chunk) }
            let fed = input[offset..<end].withUnsafeBytes {
                pipeline.feed($0, stamp: clock == .real ? 10 * chunk : nil, flooded: end - offset == read)
            }
            #expect(fed)
            offset = end
        }
        let finished = pipeline.finish()
        #expect(finished)
        if clock == .real {
            while let deadline = pipeline.session.nextDeadline() { pipeline.session.advance(to: deadline) }
        }
        pipeline.session.flush()
        return pipeline.session.sink
    }

    @Test(
        "inputs ending exactly on read boundaries give the same output with 1, 2 and 4 threads",
        arguments: [SessionConfiguration.Clock.manual, .real], [7, 64, 300, 4096])
    func boundaries(clock: SessionConfiguration.Clock, read: Int) throws {
        for size in [read, 2 * read, 3 * read, 3 * read + 1, 5 * read - 1, 40 * read]
        where size >= 120 && size <= 200_000 {
            let input = Self.exact(size)
            #expect(input.count == size)
            let expected = Self.plain(input, clock: clock, read: read)
            for threads in [1, 2, 4] {
                let actual = try Self.piped(input, clock: clock, read: read, threads: threads)
                #expect(
                    String(decoding: actual, as: UTF8.self) == String(decoding: expected, as: UTF8.self),
                    "\(size) bytes read \(read) at a time, \(threads) threads, \(clock) clock")
            }
        }
    }

    @Test("a final line without LF after a full ring is applied last")
    func finalLineAfterFullRing() throws {
        var input = Array(String(repeating: #"{"cmd":"stats"}"# + "\n", count: 4096).utf8)
        input += Array(#"{"cmd":"stats","id":"last"}"#.utf8)
        let expected = Self.plain(input, clock: .manual, read: 1 << 16)
        for threads in [2, 4] {
            let actual = try Self.piped(input, clock: .manual, read: 1 << 16, threads: threads)
            #expect(String(decoding: actual, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
            #expect(
                String(decoding: actual, as: UTF8.self).hasSuffix(
                    #""id":"last","lines":4097,"commands":4097,"errors":0,"conversations":0,"members":0,"typing":0,"events":4096}"#
                        + "\n"))
        }
    }
}

@Suite("Line batches")
struct LineBatchTests {
    @Test("a batch grown by a long line goes back to its budget when reset")
    func shrinksAfterLongLine() {
        var batch = LineBatch(lines: 4, bytes: 1 << 10)
        var collector = BatchCollector(batch: batch)
        let long = [UInt8](repeating: 0x20, count: 1 << 20)
        long.withUnsafeBytes { collector.handleLine($0, number: 1) }
        batch = collector.batch
        #expect(batch.bytes.capacity >= 1 << 20)
        batch.reset()
        #expect(batch.bytes.capacity <= 2 << 10, "kept \(batch.bytes.capacity) bytes")
        #expect(batch.isEmpty)
    }

    @Test("a batch of ordinary lines keeps its storage across resets")
    func keepsStorage() {
        var batch = LineBatch(lines: 4, bytes: 1 << 10)
        let capacity = batch.bytes.capacity
        var collector = BatchCollector(batch: batch)
        Array("{\"cmd\":\"stats\"}".utf8).withUnsafeBytes { collector.handleLine($0, number: 1) }
        batch = collector.batch
        batch.reset()
        #expect(batch.bytes.capacity == capacity)
    }
}
