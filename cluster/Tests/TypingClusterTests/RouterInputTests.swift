import Testing
import TypingProtocol
@testable import TypingCluster

/// What a framer hands over, in order.
struct FramedLines: FrameHandler {
    enum Event: Equatable, CustomStringConvertible {
        case line(Int, [UInt8])
        case tooLong(Int)

        var description: String {
            switch self {
            case .line(let number, let bytes): "\(number):\(String(decoding: bytes, as: UTF8.self).debugDescription)"
            case .tooLong(let number): "\(number):too long"
            }
        }
    }

    var events: [Event] = []
    /// Pause after every line (the paced router's way).
    var pauseEachLine = false
    var lines = 0

    var wantsPause: Bool { pauseEachLine && lines > 0 }

    mutating func handleLine(_ bytes: UnsafeRawBufferPointer, number: Int) {
        events.append(.line(number, Array(bytes)))
        lines += 1
    }

    mutating func handleTooLong(number: Int, limit: Int) {
        events.append(.tooLong(number))
    }
}

/// The router's reading (`RouterInput`) against typingd's (`Framer`, fed as
/// typingd's reader feeds it, 64 KiB at a time): on hostile bytes, read in any
/// pieces, both hand over the same lines, with the same numbers and bytes, and the
/// same too-long reports; the positions the router notes are line ends, and
/// reading resumed at any of them hands over the rest, numbered alike.
@Suite struct RouterInputTests {
    static let limit = 100
    static let mark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The hostile inputs: a byte order mark (whole, partial, elsewhere), CR LF,
    /// lone CRs, empty and blank lines, lines at and over the limit (a CR counted),
    /// too-long lines many reads long, a final line without LF.
    static let inputs: [[UInt8]] = {
        func text(_ string: String) -> [UInt8] { Array(string.utf8) }
        let x = { (count: Int) in [UInt8](repeating: UInt8(ascii: "x"), count: count) }
        let join = text("{\"cmd\":\"join\",\"conv\":\"general\",\"user\":\"ann\"}")
        var hostile = mark + join + text("\r\n")
        hostile += text("\n") + text(" \t\r\n") + text("a\rb\n") + text("c\r\r\n") + text("\r\n") + text("\r")
        hostile += text("\n") + x(limit) + text("\n") + x(limit - 1) + text("\r\n") + x(limit) + text("\r\n")
        hostile += x(limit + 1) + text("\n") + x(3 * limit + 17) + text("\r\n") + mark + join + text("\n")
        hostile += x(70_000) + text("\n") + join + text("\r")
        return [
            hostile,
            mark + join + text("\n"),
            mark,
            [0xEF, 0xBB],
            [0xEF, 0xBB] + join + text("\n"),
            [0xEF] + text("\n") + join,
            mark + mark + join,
            mark + text("\n\n"),
            mark + x(limit + 1),
            x(limit) + text("\r"),
            x(5 * limit) + text("\n\r"),
            text("\r\n\r\n\n"),
            []
        ]
    }()

    /// typingd's framing of `input`.
    static func typingd(_ input: [UInt8]) -> [FramedLines.Event] {
        var framer = Framer(maxLineBytes: limit)
        var lines = FramedLines()
        var start = 0
        while start < input.count {
            let end = min(input.count, start + (1 << 16))
            _ = input[start..<end].withUnsafeBytes { framer.feed($0, to: &lines) }
            start = end
        }
        framer.finish(to: &lines)
        return lines.events
    }

    /// The router's reading of `input` from `position` (after `lines` lines), in
    /// pieces of the sizes `sizes` gives in turn: what it hands over, and each
    /// (line end, lines) it notes.
    static func router(
        _ input: [UInt8], from position: Int = 0, lines: Int = 0, sizes: [Int],
        pauseEachLine: Bool = false
    ) throws -> (events: [FramedLines.Event], ends: [(Int, Int)]) {
        let afterLineFeed = position == 0 || input[position - 1] == 0x0A
        var reading = RouterInput(maxLineBytes: limit, position: position, lines: lines, afterLineFeed: afterLineFeed)
        var handler = FramedLines(pauseEachLine: pauseEachLine)
        var ends: [(Int, Int)] = []
        var start = position, turn = 0
        while start < input.count {
            let end = min(input.count, start + sizes[turn % sizes.count])
            turn += 1
            var at = start
            while at < end {
                handler.lines = 0
                at += try input[at..<end].withUnsafeBytes { try reading.feed($0, to: &handler) }
                ends.append((reading.lineEnd, reading.lines))
                #expect(reading.bytesHeld <= limit)
            }
            start = end
        }
        reading.finish(to: &handler)
        ends.append((reading.lineEnd, reading.lines))
        #expect(reading.position == input.count)
        return (
            handler.events.map {
                switch $0 {
                case .line(let number, let bytes): .line(number + lines, bytes)
                case .tooLong(let number): .tooLong(number + lines)
                }
            }, ends
        )
    }

    static let pieces: [[Int]] = [
        [1], [2], [3], [5, 1, 7], [64], [4096], [1 << 16], [Router.chunk], [99, 100, 101, 3, 1]
    ]

    @Test(arguments: inputs.indices)
    func theRouterReadsAsTypingdFrames(input index: Int) throws {
        let input = Self.inputs[index]
        let expected = Self.typingd(input)
        for sizes in Self.pieces {
            for pausing in [false, true] {
                let (events, _) = try Self.router(input, sizes: sizes, pauseEachLine: pausing)
                #expect(events == expected, "input \(index), pieces \(sizes), pausing \(pausing)")
            }
        }
    }

    @Test(arguments: inputs.indices)
    func positionsAreLineEndsAndReadingResumesThere(input index: Int) throws {
        let input = Self.inputs[index]
        let expected = Self.typingd(input)
        let lineCount =
            expected.map {
                switch $0 {
                case .line(let n, _), .tooLong(let n): n
                }
            }.max() ?? 0
        for sizes in [[1], [3], [64], [Router.chunk]] {
            let (_, ends) = try Self.router(input, sizes: sizes)
            var seen = Set<Int>()
            for (end, lines) in ends where seen.insert(end).inserted {
                // A line end: the input's start, just after an LF, or the end of an
                // input whose final line has none; `lines` lines end there.
                let lineFeeds = input[..<end].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                let finalLine = end == input.count && end > 0 && input[end - 1] != 0x0A && lineCount > lineFeeds
                #expect(end == 0 || input[end - 1] == 0x0A || finalLine, "input \(index): \(end) is no line end")
                #expect(lines == lineFeeds + (finalLine ? 1 : 0), "input \(index): \(lines) lines at \(end)")
                // Resumed there (a restart at a checkpoint), the rest comes as it came.
                let (rest, _) = try Self.router(input, from: end, lines: lines, sizes: sizes)
                let tail = expected.filter {
                    switch $0 {
                    case .line(let n, _), .tooLong(let n): n > lines
                    }
                }
                #expect(rest == tail, "input \(index): resumed at \(end) after \(lines) lines, pieces \(sizes)")
            }
        }
    }

    /// A resumed input must go on with the line end the line stored last lacked.
    @Test func resumingAfterALineWithoutLineFeedNeedsItsLineEnd() throws {
        let line = Array("{\"cmd\":\"tick\"}".utf8)
        for (rest, ok) in [
            ("\n{}\n", true), ("\r\n{}\n", true), ("\r", true), ("", true), ("{}\n", false), ("\r\r\n", false)
        ] {
            let input = line + Array(rest.utf8)
            var reading = RouterInput(maxLineBytes: Self.limit, position: line.count, lines: 1, afterLineFeed: false)
            var handler = FramedLines()
            var failed = false
            do {
                _ = try input[line.count...].withUnsafeBytes { try reading.feed($0, to: &handler) }
                reading.finish(to: &handler)
            } catch {
                failed = true
            }
            #expect(failed == !ok, "\(rest.debugDescription)")
            if ok { #expect(handler.events == (rest.contains("{}") ? [.line(1, Array("{}".utf8))] : [])) }
        }
    }

    /// A line of 64 MiB, read 128 KiB at a time: dropped as it is read (at most the
    /// limit of it is ever held), reported once, and the position stays at the
    /// end of the line before it until its LF comes.
    @Test func aLineOf64MiBIsDroppedAsItIsRead() throws {
        let limit = 1 << 20
        var reading = RouterInput(maxLineBytes: limit)
        var handler = FramedLines()
        let before = Array("{\"cmd\":\"tick\"}\n".utf8)
        let after = Array("{\"cmd\":\"stats\"}\n".utf8)
        _ = try before.withUnsafeBytes { try reading.feed($0, to: &handler) }
        let piece = [UInt8](repeating: UInt8(ascii: "x"), count: Router.chunk)
        var held = 0
        for _ in 0..<((64 << 20) / piece.count) {
            let used = try piece.withUnsafeBytes { try reading.feed($0, to: &handler) }
            #expect(used == piece.count)
            held = max(held, reading.bytesHeld)
            #expect(reading.lineEnd == before.count)
        }
        _ = try ([0x0A] + after).withUnsafeBytes { try reading.feed($0, to: &handler) }
        reading.finish(to: &handler)
        #expect(held <= limit)
        #expect(
            handler.events == [
                .line(1, Array("{\"cmd\":\"tick\"}".utf8)), .tooLong(2), .line(3, Array("{\"cmd\":\"stats\"}".utf8))
            ])
        #expect(reading.lines == 3)
        #expect(reading.lineEnd == before.count + (64 << 20) + 1 + after.count)
    }
}
