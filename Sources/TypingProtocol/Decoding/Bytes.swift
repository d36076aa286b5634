import Glibc

/// Byte searches through libc's vectorized `memchr`.
@usableFromInline
package enum Bytes {
    /// The offset of the first `byte` in `buffer`, if any.
    @inlinable @inline(__always)
    package static func firstIndex(of byte: UInt8, in buffer: UnsafeRawBufferPointer) -> Int? {
        guard let base = buffer.baseAddress, buffer.count > 0,
            let found = memchr(base, Int32(byte), buffer.count)
        else { return nil }
        return UnsafeRawPointer(found) - base
    }
}
