/// The open views of each user: user → the conversations whose view is open. Opening
/// and closing one cost O(1), and a user's views are listed in O(their number), so
/// neither `close` nor `offline` depends on how many views a user has open or how
/// many memberships they have. Memory follows what is open: a user's set goes with
/// their last open view, and the table shrinks when most of it is unused.
package struct OpenViews {
    package private(set) var byUser = ShrinkingDictionary<UserIndex, Set<ConversationIndex>>()
    /// Open views over all users (the sum of the sets' sizes).
    private(set) var count = 0

    /// Records the open view of user `u` in conversation `c`.
    mutating func insert(_ c: ConversationIndex, for u: UserIndex) {
        if byUser.update(u, { $0.insert(c).inserted }) ?? false {
            count += 1
        } else if byUser[u] == nil {
            byUser[u] = [c]
            count += 1
        }
    }

    /// Forgets the view of `u` in `c`, if open.
    mutating func remove(_ c: ConversationIndex, for u: UserIndex) {
        let outcome: (removed: Bool, empty: Bool)? = byUser.update(u) { views in
            guard views.remove(c) != nil else { return (false, false) }
            if !views.isEmpty && views.count * 4 < views.capacity && views.capacity > 64 {
                // Storage of the set's size (a set never gives storage back by itself).
                var smaller = Set<ConversationIndex>(minimumCapacity: views.count)
                for view in views { smaller.insert(view) }
                views = smaller
            }
            return (true, views.isEmpty)
        }
        guard let outcome, outcome.removed else { return }
        count -= 1
        if outcome.empty { byUser[u] = nil }
    }

    /// Forgets every open view of `u`, returning the conversations they were in.
    package mutating func removeAll(for u: UserIndex) -> Set<ConversationIndex> {
        guard let views = byUser.removeValue(forKey: u) else { return [] }
        count -= views.count
        return views
    }

    /// The conversations where `u` has an open view.
    package subscript(user u: UserIndex) -> Set<ConversationIndex>? { byUser[u] }
}
