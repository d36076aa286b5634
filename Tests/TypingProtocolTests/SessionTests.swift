import Testing
import TypingCore
@testable import TypingProtocol

/// Runs `input` through a session fed in chunks of `chunkSize` bytes.
func runSession(_ input: [UInt8], configuration: SessionConfiguration = SessionConfiguration(),
                chunkSize: Int = .max) -> String {
    var session = Session(configuration: configuration)
    var output: [UInt8] = []
    var start = 0
    while start < input.count {
        let end = min(input.count, start + chunkSize)
        var consumed = start
        while consumed < end {
            consumed += input[consumed..<end].withUnsafeBytes { session.feed($0) }
            session.takeOutput { output.append(contentsOf: $0) }
        }
        start = end
    }
    session.finish()
    session.takeOutput { output.append(contentsOf: $0) }
    return String(decoding: output, as: UTF8.self)
}

@Suite("Sessions")
struct SessionTests {
    static let transcript = Array("""
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
        #expect(runSession(Self.transcript) == """
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

    @Test("a chunk whose lines produce a lot of output is processed in parts of bounded output")
    func boundedOutput() {
        var lines = (0..<300).map { #"{"cmd":"join","conv":"big","user":"u\#($0)"}"# }
        for turn in 0..<40 {
            lines.append(#"{"cmd":"type","conv":"big","user":"u\#(turn)"}"#)
            lines.append(#"{"cmd":"send","conv":"big","user":"u\#(turn)"}"#)
        }
        let input = Array((lines.joined(separator: "\n") + "\n").utf8)
        var configuration = SessionConfiguration(drain: false)
        configuration.outputLimit = 4096
        var session = Session(configuration: configuration)
        var output: [UInt8] = []
        var largest = 0
        var consumed = 0
        while consumed < input.count {
            consumed += input[consumed...].withUnsafeBytes { session.feed($0) }
            largest = max(largest, session.pendingOutputCount)
            session.takeOutput { output.append(contentsOf: $0) }
        }
        session.finish()
        session.takeOutput { output.append(contentsOf: $0) }
        #expect(largest < 4096 + 300 * 120, "at most one step past the limit")
        #expect(String(decoding: output, as: UTF8.self)
                == runSession(input, configuration: SessionConfiguration(drain: false)))
    }

    @Test("a line over --max-line-bytes gets line_too_long and the next line is read")
    func lineTooLong() {
        let input = Array(("{\"cmd\":\"stats\",\"pad\":\"" + String(repeating: "x", count: 100) + "\"}\n{\"cmd\":\"stats\"}").utf8)
        let output = runSession(input, configuration: SessionConfiguration(maxLineBytes: 64), chunkSize: 10)
        #expect(output.hasPrefix(#"{"event":"error","line":1,"code":"line_too_long","#))
        #expect(output.hasSuffix(#""lines":2,"commands":1,"errors":1,"conversations":0,"members":0,"typing":0,"events":1}"# + "\n"))
    }
}
