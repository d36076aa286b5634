extension Engine {
    /// `open`: the user's view of `conv` opens on a screen: the chat at `thread` (nil:
    /// the main timeline), or the conversation's row in their chat list
    /// (Protocol.md#views-who-receives-indicators, Protocol.md#threads,
    /// Protocol.md#the-chat-list). First the user's streak in `conv` stops (`closed`)
    /// when it is at another location than the view's, or the view is a list; then the
    /// view opens or moves; a new screen forgets what it was last sent; then the
    /// conversation renders, so the viewer gets what their screen now shows.
    mutating func open<S: EventSink & ~Copyable>(
        conv: Identifier, user: Identifier, thread: Identifier?,
        view: Command.View, sink: inout S
    ) -> Failure? {
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        let list = view == .list
        let target = list ? Location.main : thread.map { conversations[c].threads.locate($0) } ?? .main
        var stoppedAt: Location = -1
        let streak = conversations[c].members[slot].streak
        // The streak stops unless the opened screen or the side pane shows where it is.
        if !streak.isNone && (list || streaks[streak].location != target)
            && conversations[c].members[slot].side != streaks[streak].location
        {
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
        if screenChanged {
            conversations[c].setLastSent(.empty, at: slot)
            forgetAnnouncements(of: c, u, .main)
        }
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
        // It stops unless the side pane shows where it is (Protocol.md#side-panes).
        if !streak.isNone && conversations[c].members[slot].side != streaks[streak].location {
            stop(streak, reason: .closed, render: true, sink: &sink)
        } else {
            // A screen that showed a thread or a list is told what the main
            // timeline shows at once (Protocol.md#who-sees-what).
            renderForgotten(c, sink: &sink)
        }
        releaseThread(from, of: c)
        return nil
    }

    /// `open` with `pane: side`: the user's side pane shows `thread`
    /// (Protocol.md#side-panes). A pane moved to another thread (or new) starts from
    /// the empty indicator; opened again at the thread it shows, it forgets nothing.
    /// The main screen is left as it is. Then the user's streak in `conv` stops
    /// (`closed`) unless the side pane or the main screen shows where it is, and the
    /// conversation renders.
    mutating func openSide<S: EventSink & ~Copyable>(
        conv: Identifier, user: Identifier, thread: Identifier,
        sink: inout S
    ) -> Failure? {
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        let target = conversations[c].threads.locate(thread)
        let from = conversations[c].members[slot].side
        if from != target {
            if from < .main { sidePanes.insert(c, for: u) }
            conversations[c].setSide(slot, to: target)
            forgetAnnouncements(of: c, u, .side)
        }
        let streak = conversations[c].members[slot].streak
        if !streak.isNone && !shows(slot, of: c, streaks[streak].location) {
            let stoppedAt = streaks[streak].location
            stop(streak, reason: .closed, render: false, sink: &sink)
            render(c, scope: .locationAndMember(stoppedAt, slot), sink: &sink)
        } else {
            render(c, scope: .member(slot), sink: &sink)
        }
        releaseThread(from, of: c)
        return nil
    }

    /// `close` with `pane: side`: the user's side pane is removed, forgetting what it
    /// was sent, without an event (no-op when there is none). Their streak in `conv`
    /// stops (`closed`) when the pane showed where it is and the main screen does not;
    /// then the conversation renders.
    mutating func closeSide<S: EventSink & ~Copyable>(conv: Identifier, user: Identifier, sink: inout S) -> Failure? {
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        let from = conversations[c].members[slot].side
        if from > .main {
            conversations[c].setSide(slot, to: -1)
            sidePanes.remove(c, for: u)
            forgetAnnouncements(of: c, u, .side)
        }
        let streak = conversations[c].members[slot].streak
        if from > .main && !streak.isNone && streaks[streak].location == from && !shows(slot, of: c, from) {
            stop(streak, reason: .closed, render: true, sink: &sink)
        } else {
            renderForgotten(c, sink: &sink)
        }
        releaseThread(from, of: c)
        return nil
    }

    /// True when a screen of member `slot` of `c` shows `location`: the side pane
    /// its thread; the main screen its location when its view kind is the chat,
    /// open or closed (a list shows none).
    func shows(_ slot: Int, of c: ConversationIndex, _ location: Location) -> Bool {
        let member = conversations[c].fields(of: slot)
        return conversations[c].members[slot].side == location || (!member.isList && member.location == location)
    }

    /// Removes every side pane of user `u` (offline), writing nothing: O(their side
    /// panes), never their memberships.
    mutating func removeAllSidePanes(of u: UserIndex) {
        for c in sidePanes.removeAll(for: u) {
            guard let slot = conversations[c].slot(of: u) else { continue }
            let from = conversations[c].members[slot].side
            conversations[c].setSide(slot, to: -1)
            forgetAnnouncements(of: c, u, .side)
            releaseThread(from, of: c)
        }
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
        forgetAnnouncements(of: c, u, .main)
        if configuration.audience == .members && conversations[c][member: slot].receives {
            if conversations[c].staleSlots.isEmpty { staleConversations += 1 }
            conversations[c].markStale(slot)
        }
        releaseThread(from, of: c)
        return nil
    }

    /// `restore` (typingd's own, for rebuilding a snapshot's announcements): the
    /// screen `pane` of the user in `conv` gets the pending announcement and the last
    /// announced text the snapshot gave it, whatever the replay's indicators
    /// scheduled: it fires at `announceAt` (none when nil), after the announcements
    /// already pending then, and it last announced `announced` (nothing when nil or
    /// empty). It renders nothing and writes nothing; without `--announce-after-ms`
    /// it keeps nothing (Protocol.md#snapshots).
    mutating func restore(
        conv: Identifier, user: Identifier, pane: Command.Pane, announceAt: Int?,
        announced: String?
    ) -> Failure? {
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        if pane == .side && conversations[c].members[slot].side <= .main {
            return Failure(
                code: .badField,
                message: "user \(Quote.id(user)) has no side pane in conversation \(Quote.id(conv)) to restore",
                field: "pane")
        }
        if let announceAt, announceAt < now {
            return Failure(
                code: .badField,
                message:
                    "\"announce_at\" \(announceAt) is earlier than the current time \(now); a pending announcement fires later",
                field: "announce_at")
        }
        guard configuration.announceAfter != nil else { return nil }
        announcements.restore(
            ScreenKey(conv: c, user: u, side: pane == .side), due: announceAt,
            announced: announced ?? "")
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
            forgetAnnouncements(of: c, u, .main)
        } else if screenChanged {
            conversations[c].setLastSent(.empty, at: slot)
            forgetAnnouncements(of: c, u, .main)
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
