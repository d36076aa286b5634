extension Engine {
    /// `open`: the user's view of `conv` opens (no-op when open). Under
    /// `--audience open` they get the current indicator at once, compared from
    /// the empty one.
    mutating func open<S: EventSink & ~Copyable>(conv: Identifier, user: Identifier, sink: inout S) -> Failure? {
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        guard !conversations[c].members[slot].isOpen else { return nil }
        users[u].openViews.append(c)
        conversations[c].openView(at: slot, openIndex: Int32(users[u].openViews.count - 1))
        if configuration.audience == .open { render(c, scope: .member(slot), sink: &sink) }
        return nil
    }

    /// `close`: the user's view closes (no-op when closed), and their streak in
    /// `conv`, if any, stops with reason `closed`, whether the view was open or not.
    mutating func close<S: EventSink & ~Copyable>(conv: Identifier, user: Identifier, sink: inout S) -> Failure? {
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        closeView(of: u, in: c, slot: slot)
        let streak = conversations[c].members[slot].streak
        if streak >= 0 { stop(streak, reason: .closed, render: true, sink: &sink) }
        return nil
    }

    /// Closes the view of member `slot` (user `u`) of `c`, if open, writing nothing.
    /// Under `--audience open`, what the viewer was last sent is forgotten: the
    /// screen that showed it is gone.
    mutating func closeView(of u: Int32, in c: Int32, slot: Int) {
        guard conversations[c].members[slot].isOpen else { return }
        let index = Int(conversations[c].members[slot].openIndex)
        conversations[c].closeView(at: slot)
        if configuration.audience == .open { conversations[c].setLastSent(.empty, at: slot) }
        // Swap-remove from the user's open views, telling the moved one its place.
        let last = users[u].openViews.removeLast()
        if index < users[u].openViews.count {
            users[u].openViews[index] = last
            if let moved = conversations[last].slot(of: u) { conversations[last].setOpenIndex(Int32(index), at: moved) }
        }
    }

    /// Closes every view of user `u` (offline): O(their open views), never their
    /// memberships.
    mutating func closeAllViews(of u: Int32) {
        while let c = users[u].openViews.last {
            guard let slot = conversations[c].slot(of: u) else { return }
            closeView(of: u, in: c, slot: slot)
        }
    }
}
