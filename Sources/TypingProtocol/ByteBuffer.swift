/// A growable byte buffer on raw memory: appending is a bounds check and a copy,
/// with none of an array's uniqueness checks. It belongs to one ``JSONWriter``.
///
/// The state lives behind a constant pointer, so mutating it needs none of the
/// run-time exclusivity tracking Swift does for a class's stored variables.
public final class ByteBuffer {
    /// The mutable part.
    struct State {
        var base: UnsafeMutableRawPointer
        var capacity: Int
        var count: Int
        /// The most bytes held at once since the last shrink check.
        var recentPeak: Int
        /// Clears since the last shrink check.
        var clears: Int
    }

    private let state: UnsafeMutablePointer<State>

    /// The capacity a buffer starts with and shrinks back towards.
    public static let initialCapacity = 1 << 16
    /// How many clears a shrink decision looks back over.
    static let shrinkWindow = 256

    /// An empty buffer with room for `capacity` bytes.
    public init(capacity: Int = ByteBuffer.initialCapacity) {
        let capacity = max(capacity, 64)
        state = UnsafeMutablePointer<State>.allocate(capacity: 1)
        state.initialize(to: State(base: UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16),
                                   capacity: capacity, count: 0, recentPeak: 0, clears: 0))
    }

    deinit {
        state.pointee.base.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The bytes written.
    public var count: Int { state.pointee.count }

    /// The bytes written, valid until the next change.
    public var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: state.pointee.base, count: state.pointee.count)
    }

    /// Appends one byte.
    @inline(__always)
    public func append(_ byte: UInt8) {
        if state.pointee.count == state.pointee.capacity { grow(to: state.pointee.count + 1) }
        state.pointee.base.storeBytes(of: byte, toByteOffset: state.pointee.count, as: UInt8.self)
        state.pointee.count += 1
    }

    /// Appends bytes.
    @inline(__always)
    public func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        let count = state.pointee.count
        if count + bytes.count > state.pointee.capacity { grow(to: count + bytes.count) }
        (state.pointee.base + count).copyMemory(from: source, byteCount: bytes.count)
        state.pointee.count = count + bytes.count
    }

    /// Appends `"`, the bytes and `"` (bytes that need no escaping).
    @inline(__always)
    public func appendQuoted(_ bytes: UnsafeRawBufferPointer) {
        let count = state.pointee.count
        let needed = count + bytes.count + 2
        if needed > state.pointee.capacity { grow(to: needed) }
        let base = state.pointee.base
        base.storeBytes(of: UInt8(ascii: "\""), toByteOffset: count, as: UInt8.self)
        if let source = bytes.baseAddress { (base + count + 1).copyMemory(from: source, byteCount: bytes.count) }
        base.storeBytes(of: UInt8(ascii: "\""), toByteOffset: needed - 1, as: UInt8.self)
        state.pointee.count = needed
    }

    /// Forgets the bytes, keeping the memory: steps that write megabytes (a change
    /// in a room of thousands) keep reusing the same pages instead of faulting
    /// fresh ones in each time. Memory goes back only after ``shrinkWindow`` clears
    /// in a row that all used less than an eighth of it.
    public func removeAll() {
        state.pointee.recentPeak = max(state.pointee.recentPeak, state.pointee.count)
        state.pointee.count = 0
        state.pointee.clears += 1
        guard state.pointee.clears >= ByteBuffer.shrinkWindow else { return }
        let peak = state.pointee.recentPeak
        if state.pointee.capacity > ByteBuffer.initialCapacity && peak * 8 < state.pointee.capacity {
            state.pointee.base.deallocate()
            state.pointee.capacity = max(ByteBuffer.initialCapacity, peak * 2)
            state.pointee.base = UnsafeMutableRawPointer.allocate(byteCount: state.pointee.capacity, alignment: 16)
        }
        state.pointee.clears = 0
        state.pointee.recentPeak = 0
    }

    /// Makes room for at least `needed` bytes, doubling.
    private func grow(to needed: Int) {
        var newCapacity = state.pointee.capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newBase.copyMemory(from: state.pointee.base, byteCount: state.pointee.count)
        state.pointee.base.deallocate()
        state.pointee.base = newBase
        state.pointee.capacity = newCapacity
    }
}
