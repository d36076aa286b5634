import CJansson
import TypingCore
import TypingProtocol

/// libFuzzer's entry point: the whole line handler (framing, jansson decoding,
/// engine, encoding) on arbitrary bytes, with invariants that trap when broken:
/// the engine's own (``Engine/checkInvariants()``, after every line) and the
/// output's (one JSON object per line, one reply per line, independent of reads).
///
/// The first byte picks the options (timeout 1…8 ms, style, typing events, a
/// small --max-line-bytes, small limits) so timers, every phrase and every limit
/// are reached; the second picks the v2 options (audience, order, a small
/// --max-listed); the third picks where the input is cut into two reads.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLineHandler(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 3 else { return 0 }
    let settings = data[0], views = data[1], cut = Int(data[2])
    let input = UnsafeRawBufferPointer(start: data + 3, count: size - 3)
    let orders: [EngineConfiguration.Order] = [.start, .recent, .name, .start]
    let configuration = SessionConfiguration(
        engine: EngineConfiguration(timeout: Int(settings & 7) + 1,
                                    style: settings & 8 == 0 ? .group : .compact,
                                    typingEvents: settings & 16 != 0,
                                    maxMembers: settings & 32 == 0 ? 100_000 : 3,
                                    maxMemberships: settings & 64 == 0 ? 10_000_000 : 5,
                                    audience: views & 1 == 0 ? .members : .open,
                                    order: orders[Int(views >> 1) & 3],
                                    maxListed: views & 8 == 0 ? 100 : Int(views >> 4) + 1),
        clock: .manual,
        maxLineBytes: settings & 128 == 0 ? 1 << 20 : 64,
        drain: true,
        output: OutputPolicy(flushThreshold: 512))

    let whole = run(input, configuration: configuration, cuts: [])
    let split = run(input, configuration: configuration, cuts: [cut * input.count / 256])
    precondition(whole.output == split.output, "output depends on how input is cut into reads")
    let threaded = runThreaded(input, configuration: configuration, lines: 1 + cut % 7, chunk: 1 + cut % 61)
    precondition(threaded == whole.output, "output of the threaded path differs")
    precondition(whole.typing == 0, "streaks left after the drain")
    check(whole.output)
    return 0
}

/// Runs `input` through a session, fed in parts cut at `cuts`.
func run(_ input: UnsafeRawBufferPointer, configuration: SessionConfiguration,
         cuts: [Int]) -> (output: [UInt8], typing: Int) {
    var configuration = configuration
    configuration.checksInvariants = true
    var session = Session(configuration: configuration, sink: [UInt8]())
    var start = 0
    for end in cuts + [input.count] where end >= start {
        let consumed = session.feed(UnsafeRawBufferPointer(rebasing: input[start..<end]))
        precondition(consumed == end - start, "a sink that never pauses got a partial feed")
        session.flush()
        start = end
    }
    session.finish()
    session.flush()
    session.engine.checkInvariants()
    return (session.sink, session.engine.typingCount)
}

/// Runs `input` as the daemon does under a flood: read `chunk` bytes at a time,
/// framed into batches of `lines` lines, decoded by two worker threads (and this
/// one), applied in order.
func runThreaded(_ input: UnsafeRawBufferPointer, configuration: SessionConfiguration, lines: Int, chunk: Int) -> [UInt8] {
    var session = Session(configuration: configuration, sink: [UInt8]())
    guard let decoder = try? ParallelDecoder(workers: 2, slots: 4, lines: lines, bytes: 4096, for: session) else {
        preconditionFailure("could not start the parsing threads")
    }
    defer { decoder.stop() }
    func apply(_ batch: inout LineBatch) -> Bool { session.apply(batch) == batch.count }
    var offset = 0
    while offset < input.count {
        let end = min(input.count, offset + chunk)
        var at = offset
        while at < end {
            while !decoder.hasRoom { _ = decoder.applyInOrder(wait: true, apply) }
            let batch = decoder.batchToFill
            at += session.frame(UnsafeRawBufferPointer(rebasing: input[at..<end]), into: &batch.pointee)
            if !batch.pointee.isEmpty { decoder.submit() }
        }
        _ = decoder.applyInOrder(wait: false, apply)
        offset = end
    }
    while !decoder.hasRoom { _ = decoder.applyInOrder(wait: true, apply) }
    let batch = decoder.batchToFill
    session.frameEnd(into: &batch.pointee)
    if !batch.pointee.isEmpty { decoder.submit() }
    _ = decoder.applyInOrder(wait: true, apply)
    session.drainIfManual()
    session.flush()
    return session.sink
}

/// Every output line is one JSON object starting with "event", with no raw
/// control byte; no input line gets two errors, or an error and an ok.
func check(_ output: [UInt8]) {
    var errorLines = Set<Int>(), okLines = Set<Int>()
    output.withUnsafeBytes { bytes in
        var start = 0
        while start < bytes.count {
            guard let lf = bytes[start...].firstIndex(of: 0x0A) else {
                preconditionFailure("output does not end with LF")
            }
            let line = UnsafeRawBufferPointer(rebasing: bytes[start..<lf])
            precondition(!line.contains { $0 < 0x20 }, "raw control byte in an event")
            precondition(line.starts(with: #"{"event":""#.utf8), "event key not first")
            var error = json_error_t()
            guard let root = json_loadb(line.baseAddress?.assumingMemoryBound(to: CChar.self), line.count,
                                        cj_decode_flags(), &error) else {
                preconditionFailure("output line is not valid JSON")
            }
            precondition(cj_is_object(root) != 0, "output line is not an object")
            if let event = json_object_get(root, "event"), let kind = json_string_value(event) {
                let name = String(cString: kind)
                let number = Int(json_integer_value(json_object_get(root, "line")))
                if name == "error" {
                    precondition(errorLines.insert(number).inserted, "two errors for line \(number)")
                    precondition(!okLines.contains(number), "ok and error for line \(number)")
                } else if name == "ok" {
                    precondition(okLines.insert(number).inserted, "two oks for line \(number)")
                }
                if name == "indicator", let text = json_string_value(json_object_get(root, "text")) {
                    precondition(!String(cString: text).unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
                                 "control character in an indicator text")
                }
            }
            json_decref(root)
            start = lf + 1
        }
    }
}
