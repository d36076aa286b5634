import Testing
import TypingCore
import TypingProtocol

/// Runs `input` through a session fed in chunks of `chunkSize` bytes, checking the
/// engine's invariants after every line.
func runSession(
    _ input: [UInt8], configuration: SessionConfiguration = SessionConfiguration(),
    chunkSize: Int = .max
) -> String {
    var configuration = configuration
    configuration.checksInvariants = true
    var session = Session(configuration: configuration, sink: [UInt8]())
    var start = 0
    while start < input.count {
        let end = min(input.count, start + chunkSize)
        let consumed = input[start..<end].withUnsafeBytes { session.feed($0) }
        #expect(consumed == end - start, "an array sink never pauses")
        session.flush()
        start = end
    }
    session.finish()
    session.flush()
    return String(decoding: session.sink, as: UTF8.self)
}

/// A sink that fails on its `failAt`-th write, and counts the bytes it took.
struct FailingSink: ByteSink {
    struct Broken: Error, Equatable {}
    var writes = 0
    var taken = 0
    let failAt: Int

    mutating func write(_ bytes: UnsafeRawBufferPointer) throws(Broken) {
        writes += 1
        if writes == failAt { throw Broken() }
        taken += bytes.count
    }
}

/// A sink that asks for a pause once it has taken `pauseAfter` writes.
struct PausingSink: ByteSink {
    var bytes: [UInt8] = []
    var writes = 0
    let pauseAfter: Int

    mutating func write(_ chunk: UnsafeRawBufferPointer) {
        writes += 1
        bytes.append(contentsOf: chunk)
    }

    var shouldPause: Bool { writes >= pauseAfter }
}

@Suite("Sessions")
struct SessionTests {
    static let transcript = Array(
        """
        {"cmd":"join","conv":"g","user":"a","name":"Ann"}\r
        {"cmd":"join","conv":"g","user":"b","name":"Bo"}

        {"cmd":"type","conv":"g","user":"a","at":10,"id":1}
        garbage
        {"cmd":"stats","id":"s"}
        {"cmd":"type","conv":"g","user":"b","at":20}
        """.utf8)

    @Test("the output does not depend on how the input is cut into reads", arguments: [1, 2, 3, 7, 16, 64])
    func chunkInvariance(size: Int) {
        #expect(runSession(Self.transcript, chunkSize: size) == runSession(Self.transcript))
    }

    @Test("a whole session: blank lines count, errors do not stop anything, drain at the end")
    func whole() {
        #expect(
            runSession(Self.transcript) == """
                {"event":"indicator","at":10,"conv":"g","viewer":"b","typing":["a"],"text":"Ann is typing..."}
                {"event":"ok","line":4,"id":1}
                {"event":"error","line":5,"code":"bad_json","message":"invalid JSON at column 7: invalid token near 'garbage'","column":7}
                {"event":"stats","at":10,"id":"s","lines":6,"commands":4,"errors":1,"conversations":1,"members":2,"typing":1,"events":3}
                {"event":"indicator","at":20,"conv":"g","viewer":"a","typing":["b"],"text":"Bo is typing..."}
                {"event":"indicator","at":3010,"conv":"g","viewer":"b","typing":[],"text":""}
                {"event":"indicator","at":3020,"conv":"g","viewer":"a","typing":[],"text":""}

                """)
    }

    @Test("without drain, the session ends with the input")
    func noDrain() {
        let output = runSession(Self.transcript, configuration: SessionConfiguration(drain: false))
        #expect(!output.contains("3010"))
        #expect(output.hasSuffix(#""text":"Bo is typing..."}"# + "\n"))
    }

    /// A room of 300 where 40 members take turns: a few KiB of input, ~24,000 events.
    static let bigRoom: [UInt8] = {
        var lines = (0..<300).map { #"{"cmd":"join","conv":"big","user":"u\#($0)"}"# }
        for turn in 0..<40 {
            lines.append(#"{"cmd":"type","conv":"big","user":"u\#(turn)"}"#)
            lines.append(#"{"cmd":"send","conv":"big","user":"u\#(turn)"}"#)
        }
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }()

    @Test("output is written whenever the threshold is reached, within a step too: what waits stays bounded")
    func boundedOutput() {
        var configuration = SessionConfiguration(drain: false, output: OutputPolicy(flushThreshold: 4096))
        configuration.checksInvariants = true
        var session = Session(configuration: configuration, sink: PausingSink(pauseAfter: .max))
        let consumed = Self.bigRoom.withUnsafeBytes { session.feed($0) }
        #expect(consumed == Self.bigRoom.count)
        #expect(session.pendingOutputCount < 4096, "the rest was written as it went")
        #expect(session.sink.writes > 100, "in many writes, during steps")
        session.finish()
        session.flush()
        #expect(
            String(decoding: session.sink.bytes, as: UTF8.self)
                == runSession(Self.bigRoom, configuration: SessionConfiguration(drain: false)))
    }

    @Test("a sink that asks for a pause stops the session after a line; feeding the rest resumes it")
    func pause() {
        let policy = OutputPolicy(flushThreshold: 1000)
        var session = Session(
            configuration: SessionConfiguration(drain: false, output: policy),
            sink: PausingSink(pauseAfter: 3))
        let first = Self.bigRoom.withUnsafeBytes { session.feed($0) }
        #expect(first < Self.bigRoom.count, "paused before the end of the chunk")
        #expect(Self.bigRoom[first - 1] == 0x0A, "after a whole line")
        session.flush()
        #expect(String(decoding: session.sink.bytes, as: UTF8.self).hasSuffix("\n"))
        #expect(
            runSession(Array(Self.bigRoom[..<first]), configuration: SessionConfiguration(drain: false))
                == String(decoding: session.sink.bytes, as: UTF8.self), "exactly the output of the lines consumed")
    }

    @Test("a failing sink: the failure is thrown at the end of its step, and nothing more is written")
    func failingSink() {
        var session = Session(
            configuration: SessionConfiguration(drain: false, output: OutputPolicy(flushThreshold: 500)),
            sink: FailingSink(failAt: 2))
        var thrown = false
        Self.bigRoom.withUnsafeBytes { bytes in
            do throws(FailingSink.Broken) { _ = try session.feed(bytes) } catch { thrown = true }
        }
        #expect(thrown)
        let taken = session.sink.taken
        #expect(throws: FailingSink.Broken.self) { try session.flush() }
        #expect(session.sink.taken == taken && session.sink.writes == 2, "no write after the failure")
        session.engine.checkInvariants()
    }

    @Test("a line over --max-line-bytes gets line_too_long and the next line is read")
    func lineTooLong() {
        let input = Array(
            ("{\"cmd\":\"stats\",\"pad\":\"" + String(repeating: "x", count: 100) + "\"}\n{\"cmd\":\"stats\"}").utf8)
        let output = runSession(input, configuration: SessionConfiguration(maxLineBytes: 64), chunkSize: 10)
        #expect(output.hasPrefix(#"{"event":"error","line":1,"code":"line_too_long","#))
        #expect(
            output.hasSuffix(
                #""lines":2,"commands":1,"errors":1,"conversations":0,"members":0,"typing":0,"events":1}"# + "\n"))
    }
}
