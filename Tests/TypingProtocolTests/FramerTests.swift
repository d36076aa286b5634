import Testing
import TypingProtocol

/// Records what a framer hands over.
struct FrameRecorder: FrameHandler {
    var frames: [String] = []
    /// Ask the framer to pause after every line.
    var pauseAlways = false

    var wantsPause: Bool { pauseAlways }

    mutating func handleLine(_ bytes: UnsafeRawBufferPointer, number: Int) {
        frames.append("\(number):" + String(decoding: bytes, as: UTF8.self))
    }

    mutating func handleTooLong(number: Int, limit: Int) {
        frames.append("\(number):too long")
    }
}

/// Records the bytes of each line a framer hands over.
struct BytesRecorder: FrameHandler {
    var lines: [[UInt8]] = []
    var wantsPause: Bool { false }
    mutating func handleLine(_ bytes: UnsafeRawBufferPointer, number: Int) { lines.append(Array(bytes)) }
    mutating func handleTooLong(number: Int, limit: Int) { lines.append([]) }
}

/// Frames `input` fed in chunks of `chunkSize` bytes.
func frame(_ input: String, max: Int = 100, chunkSize: Int = .max) -> [String] {
    var framer = Framer(maxLineBytes: max)
    var recorder = FrameRecorder()
    let bytes = Array(input.utf8)
    var start = 0
    while start < bytes.count {
        let end = min(bytes.count, start + chunkSize)
        _ = bytes[start..<end].withUnsafeBytes { framer.feed($0, to: &recorder) }
        start = end
    }
    framer.finish(to: &recorder)
    return recorder.frames
}

@Suite("Framing")
struct FramerTests {
    @Test("LF ends lines, one CR before LF is dropped, every line is numbered")
    func basics() {
        #expect(frame("a\nb\r\n\n c\r\r\n") == ["1:a", "2:b", "3:", "4: c\r"])
    }

    @Test("a final line without LF counts; an empty input has no lines")
    func finalLine() {
        #expect(frame("a\nlast") == ["1:a", "2:last"])
        #expect(frame("last\r") == ["1:last"])
        #expect(frame("") == [])
        #expect(frame("a\n") == ["1:a"])
    }

    @Test("lines split across chunks of any size come out whole", arguments: [1, 2, 3, 5, 8])
    func chunking(size: Int) {
        #expect(frame("first\r\nsecond\n\nthird", chunkSize: size) == ["1:first", "2:second", "3:", "4:third"])
    }

    @Test(
        "a line over the limit is reported once, with its number, and reading resumes after its LF",
        arguments: [1, 3, 7, 1000])
    func tooLong(size: Int) {
        let input = "ok\n" + String(repeating: "x", count: 25) + "\nnext\n"
        #expect(frame(input, max: 10, chunkSize: size) == ["1:ok", "2:too long", "3:next"])
    }

    @Test("the limit counts the CR but not the LF")
    func limitBoundary() {
        #expect(frame("12345\n", max: 5) == ["1:12345"])
        #expect(frame("1234\r\n", max: 5) == ["1:1234"])
        #expect(frame("12345\r\n", max: 5) == ["1:too long"])
        #expect(frame("123456", max: 5) == ["1:too long"], "a final line without LF too")
        #expect(frame("123456", max: 5, chunkSize: 2) == ["1:too long"])
    }

    @Test("a handler can pause the framer after any line; feeding the rest continues exactly")
    func pausing() {
        let input = Array("a\nbb\r\n\nccc\ndd".utf8)
        var framer = Framer(maxLineBytes: 100)
        var recorder = FrameRecorder(pauseAlways: true)
        var offsets: [Int] = []
        var consumed = 0
        while consumed < input.count {
            let used = input[consumed...].withUnsafeBytes { framer.feed($0, to: &recorder) }
            consumed += used
            offsets.append(consumed)
        }
        framer.finish(to: &recorder)
        #expect(offsets == [2, 6, 7, 11, 13])
        #expect(recorder.frames == ["1:a", "2:bb", "3:", "4:ccc", "5:dd"])
    }

    @Test(
        "a byte order mark is skipped at the input's start only; input resumed mid-way keeps it in its line",
        arguments: [1, 2, 1000])
    func byteOrderMarkAtTheStartOnly(size: Int) {
        let input: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("a\n".utf8) + [0xEF, 0xBB, 0xBF] + Array("b\n".utf8)
        for atStart in [true, false] {
            var framer = Framer(maxLineBytes: 100, atInputStart: atStart)
            var recorder = BytesRecorder()
            var start = 0
            while start < input.count {
                let end = min(input.count, start + size)
                _ = input[start..<end].withUnsafeBytes { framer.feed($0, to: &recorder) }
                start = end
            }
            framer.finish(to: &recorder)
            let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
            #expect(
                recorder.lines == [(atStart ? [] : mark) + Array("a".utf8), mark + Array("b".utf8)],
                "at the start: \(atStart)")
            #expect(framer.linesEnded == 2)
        }
    }

    @Test("an over-long line is never held whole")
    func boundedMemory() {
        var framer = Framer(maxLineBytes: 1000)
        var recorder = FrameRecorder()
        let chunk = [UInt8](repeating: 0x61, count: 4096)
        for _ in 0..<256 { _ = chunk.withUnsafeBytes { framer.feed($0, to: &recorder) } }
        #expect(framer.pending.capacity < 8192)
        #expect(framer.bytesHeld == 0)
        _ = Array("\n{}\n".utf8).withUnsafeBytes { framer.feed($0, to: &recorder) }
        #expect(recorder.frames == ["1:too long", "2:{}"])
    }
}
