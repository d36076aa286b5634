import CLinux
import Glibc

/// Gives freed heap memory back to the system after a large drop in state.
///
/// The engine frees everything of a conversation when its last member leaves, and
/// a streak when it stops, but glibc keeps freed chunks in its arenas. When the
/// footprint (memberships, streaks and open views) has fallen to half its high-water mark (and
/// by at least ``minimumDrop``), the loop calls `malloc_trim(0)` while idle, so
/// resident memory follows what is live.
struct MemoryReturn {
    /// Allocations of this size and more get their own mappings, which go back to
    /// the system the moment they are freed. glibc raises this threshold on its
    /// own as large blocks are freed, after which the engine's large arrays (which
    /// grow by doubling) land inside the heap and leave holes that trimming cannot
    /// return while live records sit above them; typingd pins it instead.
    static let mappingThreshold: Int32 = 256 * 1024

    /// Sets how glibc places large allocations (see ``mappingThreshold``); once,
    /// at start.
    static func configure() {
        mallopt(M_MMAP_THRESHOLD, mappingThreshold)
    }

    /// The smallest drop in footprint worth a trim.
    static let minimumDrop = 4096

    /// The largest footprint seen since the last trim.
    private var highWater = 0

    /// Trims if the footprint fell far enough since the high-water mark.
    mutating func check(footprint: Int) {
        if footprint > highWater {
            highWater = footprint
        } else if highWater - footprint >= MemoryReturn.minimumDrop && footprint * 2 <= highWater {
            malloc_trim(0)
            highWater = footprint
        }
    }
}
