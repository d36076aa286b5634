import CLinux
import Glibc

/// Gives freed heap memory back to the system after a large drop in state.
///
/// The engine frees everything of a conversation when its last member leaves,
/// but glibc keeps freed chunks in its arenas. When the number of memberships has
/// fallen to half its high-water mark (and by at least ``minimumDrop``), the loop
/// calls `malloc_trim(0)` while idle, so resident memory follows what is live.
struct MemoryReturn {
    /// The smallest drop in memberships worth a trim.
    static let minimumDrop = 4096

    /// The most memberships seen since the last trim.
    private var highWater = 0

    /// Trims if memberships fell far enough since the high-water mark.
    mutating func check(memberships: Int) {
        if memberships > highWater {
            highWater = memberships
        } else if highWater - memberships >= MemoryReturn.minimumDrop && memberships * 2 <= highWater {
            malloc_trim(0)
            highWater = memberships
        }
    }
}
