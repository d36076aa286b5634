/// The 64-bit finalizer of SplitMix64: every input bit affects every output bit.
/// With a random per-engine seed mixed in first, table positions cannot be
/// predicted from outside, so crafted ids cannot force collisions.
@usableFromInline
enum Mixer {
    /// Mixes `value`.
    @inlinable @inline(__always)
    static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }
}
