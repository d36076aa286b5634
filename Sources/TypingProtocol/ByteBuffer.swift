/// A growable byte buffer on raw memory: appending is a bounds check and a copy,
/// with none of an array's uniqueness checks. It belongs to one ``JSONWriter``.
public final class ByteBuffer {
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    /// The bytes written.
    public private(set) var count = 0

    /// An empty buffer with room for `capacity` bytes.
    public init(capacity: Int = 1 << 16) {
        self.capacity = max(capacity, 64)
        base = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit {
        base.deallocate()
    }

    /// The bytes written, valid until the next change.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// Appends one byte.
    @inline(__always)
    public func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// Appends bytes.
    @inline(__always)
    public func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if count + bytes.count > capacity { grow(to: count + bytes.count) }
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Forgets the bytes; gives memory back if the buffer grew past `keeping`.
    public func removeAll(keepingCapacityUpTo keeping: Int = 1 << 20) {
        count = 0
        if capacity > keeping {
            base.deallocate()
            capacity = 1 << 16
            base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        }
    }

    /// Makes room for at least `needed` bytes, doubling.
    private func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newBase.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }
}
