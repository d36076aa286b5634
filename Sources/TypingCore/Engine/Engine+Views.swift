extension Engine {
    /// `open`: the user's view of `conv` opens on a screen: the chat at `thread` (nil:
    /// the main timeline), or the conversation's row in their chat list
    /// (Protocol.md#views-who-receives-indicators, Protocol.md#threads,
    /// Protocol.md#the-chat-list). First the user's streak in `conv` stops (`closed`)
    /// when it is at another location than the view's, or the view is a list; then the
    /// view opens or moves; a new screen forgets what it was last sent; then the
    /// conversation renders, so the viewer gets what their screen now shows.
    mutating func open<S: EventSink & ~Copyable>(conv: Identifier, user: Identifier, thread: Identifier?,
                                                 view: Command.View, sink: inout S) -> Failure? {
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        let list = view == .list
        let target = list ? Location.main : thread.map { conversations[c].threads.locate($0) } ?? .main
        var stoppedAt: Location = -1
        let streak = conversations[c].members[slot].streak
        if !streak.isNone && (list || streaks[streak].location != target) {
            stoppedAt = streaks[streak].location
            stop(streak, reason: .closed, render: false, sink: &sink)
        }
        let wasOpen = conversations[c].isOpen(slot)
        let from = conversations[c].members[slot].location
        let screenChanged = from != target || conversations[c].members[slot].isList != list
        if !wasOpen {
            openViews.insert(c, for: u)
            conversations[c].openView(at: slot)
        }
        conversations[c].move(slot, to: target)
        conversations[c][member: slot].isList = list
        if screenChanged { conversations[c].setLastSent(.empty, at: slot) }
        if stoppedAt >= 0 {
            render(c, scope: .locationAndMember(stoppedAt, slot), sink: &sink)
        } else {
            render(c, scope: .member(slot), sink: &sink)
        }
        releaseThread(from, of: c)
        return nil
    }

    /// `close`: the user's view closes (no-op when closed) and goes back to the chat
    /// at the main timeline, and their streak in `conv`, if any, stops with reason
    /// `closed`, whether the view was open or not.
    mutating func close<S: EventSink & ~Copyable>(conv: Identifier, user: Identifier, sink: inout S) -> Failure? {
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        let from = closeView(of: u, in: c, slot: slot)
        let streak = conversations[c].members[slot].streak
        if !streak.isNone {
            stop(streak, reason: .closed, render: true, sink: &sink)
        } else {
            // A screen that showed a thread or a list is told what the main
            // timeline shows at once (Protocol.md#who-sees-what).
            renderForgotten(c, sink: &sink)
        }
        releaseThread(from, of: c)
        return nil
    }

    /// `forget` (typingd's own, for rebuilding a snapshot's `forgotten` members):
    /// the user's view of `conv` closes as `offline` closes it, writing nothing,
    /// and what they were last sent is forgotten, whatever their screen was: under
    /// `--audience members` they are compared from the empty indicator at the next
    /// render of `conv`, whatever causes it. It stops no streak and renders nothing
    /// (the one command naming a conversation that does not render it).
    mutating func forget(conv: Identifier, user: Identifier) -> Failure? {
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        let from = closeView(of: u, in: c, slot: slot)
        conversations[c].setLastSent(.empty, at: slot)
        if configuration.audience == .members && conversations[c][member: slot].receives {
            if conversations[c].staleSlots.isEmpty { staleConversations += 1 }
            conversations[c].markStale(slot)
        }
        releaseThread(from, of: c)
        return nil
    }

    /// Closes the view of member `slot` (user `u`) of `c`, if open, writing nothing,
    /// and returns where its screen was. The member is back at the chat of the main
    /// timeline. Under `--audience open`, what the viewer was last sent is
    /// forgotten: the screen that showed it is gone. Under `--audience members`, a
    /// view that showed a thread or a list forgets it too, and the member is
    /// compared at the next render of the conversation, whatever causes it.
    @discardableResult
    mutating func closeView(of u: UserIndex, in c: ConversationIndex, slot: Int) -> Location {
        let from = conversations[c].members[slot].location
        guard conversations[c].isOpen(slot) else { return from }
        let screenChanged = from != .main || conversations[c].members[slot].isList
        conversations[c].closeView(at: slot)
        conversations[c].move(slot, to: .main)
        conversations[c][member: slot].isList = false
        if configuration.audience == .open {
            conversations[c].setLastSent(.empty, at: slot)
        } else if screenChanged {
            conversations[c].setLastSent(.empty, at: slot)
            if conversations[c][member: slot].receives {
                if conversations[c].staleSlots.isEmpty { staleConversations += 1 }
                conversations[c].markStale(slot)
            }
        }
        openViews.remove(c, for: u)
        return from
    }

    /// Closes every view of user `u` (offline): O(their open views), never their
    /// memberships.
    mutating func closeAllViews(of u: UserIndex) {
        for c in openViews.removeAll(for: u) {
            guard let slot = conversations[c].slot(of: u) else { continue }
            releaseThread(closeView(of: u, in: c, slot: slot), of: c)
        }
    }

    /// Forgets thread `location` of `c` when nobody types or looks there any more.
    mutating func releaseThread(_ location: Location, of c: ConversationIndex) {
        guard location > .main, conversations.contains(c) else { return }
        conversations[c].threads.release(location)
    }
}
