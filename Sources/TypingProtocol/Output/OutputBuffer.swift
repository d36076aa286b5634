/// A growable byte buffer on raw memory, for encoded output: appending is a bounds
/// check and a copy, with none of an array's uniqueness checks.
///
/// It is noncopyable: a value that holds one (a ``Session``, a format's cache) has
/// one owner, so no copy can ever share its bytes or free them twice. It frees its
/// memory when it goes away.
///
/// An ``EventFormat`` appends each event to the buffer it is given, with the
/// `append` methods; the session writes the buffer to its sink and empties it.
public struct OutputBuffer: ~Copyable {
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    /// The number of bytes written.
    public private(set) var count = 0
    /// The most bytes held at once since the last shrink check.
    private var recentPeak = 0
    /// Clears since the last shrink check.
    private var clears = 0

    /// The capacity a buffer starts with and shrinks back towards.
    static let initialCapacity = 1 << 16
    /// How many clears a shrink decision looks back over.
    static let shrinkWindow = 256

    /// An empty buffer with room for `capacity` bytes.
    public init(capacity: Int = 1 << 16) {
        self.capacity = max(capacity, 64)
        base = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit {
        base.deallocate()
    }

    /// Calls `body` with the bytes written (valid only during the call).
    @inline(__always)
    public func withBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// A copy of the bytes written.
    public var bytes: [UInt8] { withBytes { Array($0) } }

    /// Appends one byte.
    @inline(__always)
    public mutating func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// Appends bytes.
    @inline(__always)
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if count + bytes.count > capacity { grow(to: count + bytes.count) }
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Appends the bytes of another buffer.
    @inline(__always)
    mutating func append(_ other: borrowing OutputBuffer) {
        guard other.count > 0 else { return }
        if count + other.count > capacity { grow(to: count + other.count) }
        (base + count).copyMemory(from: other.base, byteCount: other.count)
        count += other.count
    }

    /// Appends ASCII text (keys, punctuation, constants).
    @inline(__always)
    public mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends the UTF-8 bytes of `text`. (Named apart from `append(_:)`, so that a
    /// string literal takes the `StaticString` overload, which copies bytes known at
    /// compile time, instead of building a `String`.)
    public mutating func append(contentsOf text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// Appends `value` in decimal.
    public mutating func appendDecimal(_ value: Int) {
        if value < 0 { append(UInt8(ascii: "-")) }
        var rest = value.magnitude
        if rest < 10 {
            append(UInt8(truncatingIfNeeded: rest) &+ 0x30)
            return
        }
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { digits in
            var index = digits.count
            repeat {
                index -= 1
                digits[index] = UInt8(truncatingIfNeeded: rest % 10) &+ 0x30
                rest /= 10
            } while rest > 0
            append(UnsafeRawBufferPointer(rebasing: digits[index...]))
        }
    }

    /// Reserves `count` more bytes and calls `body` with them; `body` fills them all.
    /// For encoders that write a known number of bytes with stores.
    @inline(__always)
    mutating func appendUninitialized(_ count: Int, _ body: (UnsafeMutableRawPointer) -> Void) {
        if self.count + count > capacity { grow(to: self.count + count) }
        body(base + self.count)
        self.count += count
    }

    /// Forgets the bytes, keeping the memory: steps that write megabytes (a change
    /// in a room of thousands) keep reusing the same pages instead of faulting
    /// fresh ones in each time. Memory goes back only after 256 clears
    /// in a row that all used less than an eighth of it.
    public mutating func removeAll() {
        recentPeak = max(recentPeak, count)
        count = 0
        clears += 1
        guard clears >= OutputBuffer.shrinkWindow else { return }
        if capacity > OutputBuffer.initialCapacity && recentPeak * 8 < capacity {
            base.deallocate()
            capacity = max(OutputBuffer.initialCapacity, recentPeak * 2)
            base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        }
        clears = 0
        recentPeak = 0
    }

    /// Makes room for at least `needed` bytes, doubling.
    private mutating func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newBase.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }
}
