extension Engine {
    /// `open`: the user's view of `conv` opens (no-op when open). Under
    /// `--audience open` they get the current indicator at once, compared from
    /// the empty one.
    mutating func open<S: EventSink & ~Copyable>(conv: Identifier, user: Identifier, sink: inout S) -> Failure? {
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        guard !conversations[c].isOpen(slot) else { return nil }
        openViews.insert(c, for: u)
        conversations[c].openView(at: slot)
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
        guard conversations[c].isOpen(slot) else { return }
        conversations[c].closeView(at: slot)
        if configuration.audience == .open { conversations[c].setLastSent(.empty, at: slot) }
        openViews.remove(c, for: u)
    }

    /// Closes every view of user `u` (offline): O(their open views), never their
    /// memberships.
    mutating func closeAllViews(of u: Int32) {
        for c in openViews.removeAll(for: u) {
            guard let slot = conversations[c].slot(of: u) else { continue }
            closeView(of: u, in: c, slot: slot)
        }
    }
}
