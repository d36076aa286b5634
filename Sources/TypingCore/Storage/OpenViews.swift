/// The open views of each user: user → the conversations whose view is open. Opening
/// and closing one cost O(1), and a user's views are listed in O(their number), so
/// neither `close` nor `offline` depends on how many views a user has open or how
/// many memberships they have. Memory follows what is open: a user's set goes with
/// their last open view, and the table shrinks when most of it is unused.
struct OpenViews {
    private(set) var byUser: [Int32: Set<Int32>] = [:]
    /// Open views over all users (the sum of the sets' sizes).
    private(set) var count = 0
    /// The most users held since the table was last rebuilt.
    private var highWater = 0

    /// Records the open view of user `u` in conversation `c`.
    mutating func insert(_ c: Int32, for u: Int32) {
        if byUser[u, default: []].insert(c).inserted { count += 1 }
        highWater = max(highWater, byUser.count)
    }

    /// Forgets the view of `u` in `c`, if open.
    mutating func remove(_ c: Int32, for u: Int32) {
        guard let index = byUser.index(forKey: u) else { return }
        guard byUser.values[index].remove(c) != nil else { return }
        count -= 1
        if byUser.values[index].isEmpty {
            byUser.remove(at: index)
            shrinkIfSparse()
        } else if byUser.values[index].count * 4 < byUser.values[index].capacity && byUser.values[index].capacity > 64 {
            // Storage of the set's size (a set never gives storage back by itself).
            var smaller = Set<Int32>(minimumCapacity: byUser.values[index].count)
            for view in byUser.values[index] { smaller.insert(view) }
            byUser.values[index] = smaller
        }
    }

    /// Forgets every open view of `u`, returning the conversations they were in.
    mutating func removeAll(for u: Int32) -> Set<Int32> {
        guard let views = byUser.removeValue(forKey: u) else { return [] }
        count -= views.count
        shrinkIfSparse()
        return views
    }

    /// The conversations where `u` has an open view.
    subscript(user u: Int32) -> Set<Int32>? { byUser[u] }

    /// Rebuilds the table in storage of its size once it uses less than a quarter of
    /// what it grew to (a dictionary never gives storage back by itself).
    private mutating func shrinkIfSparse() {
        guard highWater > 64, byUser.count * 4 < highWater else { return }
        var smaller = [Int32: Set<Int32>](minimumCapacity: byUser.count)
        for (user, views) in byUser { smaller[user] = views }
        byUser = smaller
        highWater = byUser.count
    }
}
