import TypingFuzzSupport

/// libFuzzer's entry point: the whole line handler (framing, jansson decoding,
/// engine, JSON and text encoding) on arbitrary bytes. The properties, and what the
/// first three bytes of an input mean, are `LineHandlerFuzz`'s (the TypingFuzzSupport
/// target), so that `swift test` checks the named regressions in `fuzz/regressions/`
/// the same way.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLineHandler(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    LineHandlerFuzz.check(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
