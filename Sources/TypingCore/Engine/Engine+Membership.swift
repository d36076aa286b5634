extension Engine {
    /// The conversation, user and member slot of `user` in `conv`, if a member.
    @inline(__always)
    func membership(of user: Identifier, in conv: Identifier) -> (conv: ConversationIndex, user: UserIndex, slot: Int)?
    {
        guard let c = findConversation(conv) else { return nil }
        if conversations[c].isIndexed {
            guard let u = findUser(user), let slot = conversations[c].slot(of: u) else { return nil }
            return (c, u, slot)
        }
        guard let slot = conversations[c].scan(for: user, verify: { users[$0].id == user }) else {
            return nil
        }
        return (c, conversations[c].members[slot].user, slot)
    }

    /// `join`: membership (unless already a member, or past a limit), then the
    /// settings, and the indicators that changed (Protocol.md#user-settings): the other
    /// conversations the user types in first, in streak order, when the join
    /// renames or hides them (with the old locale); then, when it changes the
    /// locale or `receive_typing`, every other conversation of the user in join
    /// order; then this one, once (a new member under `--audience members` gets the
    /// current indicator at once).
    mutating func join<S: EventSink & ~Copyable>(
        conv: Identifier, user: Identifier, name: String?, sendTyping: Bool?,
        locale: String?, receiveTyping: Bool?, sink: inout S
    ) -> Failure? {
        let existingConv = findConversation(conv)
        let existingUser = findUser(user)
        var isMember = false
        if let c = existingConv, let u = existingUser {
            isMember = conversations[c].slot(of: u) != nil
        }
        if !isMember, let failure = limitFailure(joining: existingConv, conv: conv) {
            return failure
        }
        let u = existingUser ?? createUser(user)
        let c = existingConv ?? createConversation(conv)
        var change = applySettings(to: u, name: name, sendTyping: sendTyping)
        let newSlot = isMember ? nil : addMember(u, to: c)

        visitStreaks(of: u, except: c, for: change, sink: &sink)
        applyViewSettings(to: u, locale: locale, receiveTyping: receiveTyping, into: &change)
        visitViews(of: u, except: c, for: change, sink: &sink)
        guard let slot = newSlot ?? conversations[c].slot(of: u) else { return nil }
        if change.touchesViews { syncSlot(slot, of: c, user: u) }
        let streak = conversations[c].members[slot].streak
        if change.touchesStreaks && !streak.isNone {
            update(streak, for: change, also: change.touchesViews ? slot : -1, sink: &sink)
        } else if change.touchesViews || (newSlot != nil && configuration.audience == .members) {
            render(c, scope: .member(slot), sink: &sink)
        } else {
            renderForgotten(c, sink: &sink)
        }
        return nil
    }

    /// The `limit` failure a new membership in `existing` would cause, if any.
    func limitFailure(joining existing: ConversationIndex?, conv: Identifier) -> Failure? {
        if let c = existing, conversations[c].memberCount >= configuration.maxMembers {
            return Failure(
                code: .limit,
                message:
                    "conversation \(Quote.id(conv)) already has \(configuration.maxMembers) members, the most --max-members allows",
                field: "conv")
        }
        if existing == nil && conversations.count >= configuration.maxConversations {
            return Failure(
                code: .limit,
                message:
                    "there are already \(configuration.maxConversations) conversations, the most --max-conversations allows; \(Quote.id(conv)) would be a new one",
                field: "conv")
        }
        if liveMemberships >= configuration.maxMemberships {
            return Failure(
                code: .limit,
                message:
                    "there are already \(configuration.maxMemberships) memberships in all, the most --max-memberships allows",
                field: "user")
        }
        return nil
    }

    /// `leave` and `remove`: stop the user's streak here, then end the membership.
    mutating func depart<S: EventSink & ~Copyable>(
        conv: Identifier, user: Identifier, by: Identifier?,
        reason: Event.Typing.Reason, sink: inout S
    ) -> Failure? {
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        if let by, membership(of: by, in: conv) == nil {
            return .notMember(by, of: conv, field: "by")
        }
        let streak = conversations[c].members[slot].streak
        let typedAt = !streak.isNone ? streaks[streak].location : -1
        if !streak.isNone {
            stop(streak, reason: reason, render: false, sink: &sink)
        }
        let viewedAt = closeView(of: u, in: c, slot: slot)
        let sideAt = conversations[c].members[slot].side
        let conversationGoes = conversations[c].memberCount == 1
        removeMember(u, slot: slot, from: c)
        if !conversationGoes {
            if typedAt >= 0 {
                render(c, scope: .location(typedAt), sink: &sink)
            } else {
                renderForgotten(c, sink: &sink)
            }
            releaseThread(viewedAt, of: c)
            releaseThread(sideAt, of: c)
        }
        return nil
    }

    /// Interns a new user, who has no name yet.
    mutating func createUser(_ id: Identifier) -> UserIndex {
        let u = users.insert(UserRecord(id: id))
        userIndex.insert(hash: id.hash(seed: seed), record: u)
        return u
    }

    /// Interns a new, empty conversation.
    mutating func createConversation(_ id: Identifier) -> ConversationIndex {
        let c = conversations.insert(ConversationRecord(id: id, openAudience: configuration.audience == .open))
        conversationIndex.insert(hash: id.hash(seed: seed), record: c)
        return c
    }

    /// Appends user `u` to the members of `c`, at the end of the user's list of
    /// memberships, and returns the new slot (with the user's table and
    /// `receive_typing`).
    mutating func addMember(_ u: UserIndex, to c: ConversationIndex) -> Int {
        let head = users[u].memberships
        let link: MembershipIndex
        if head.isNone {
            link = memberships.insert(MembershipLink(conv: c, previous: .none, next: .none))
            memberships[link].previous = link
            memberships[link].next = link
            users[u].memberships = link
        } else {
            let tail = memberships[head].previous
            link = memberships.insert(MembershipLink(conv: c, previous: tail, next: head))
            memberships[tail].next = link
            memberships[head].previous = link
        }
        let slot = conversations[c].append(u, id: users[u].id, link: link, receives: users[u].receivesTyping)
        conversations[c][member: slot].table = table(of: u)
        liveMemberships += 1
        return slot
    }

    /// Ends the membership of `u` (not typing) in `c`, freeing what is left unused:
    /// the user without memberships, the conversation without members.
    mutating func removeMember(_ u: UserIndex, slot: Int, from c: ConversationIndex) {
        let link = conversations[c].members[slot].link
        let wasStale = !conversations[c].staleSlots.isEmpty
        if conversations[c].members[slot].side > .main { sidePanes.remove(c, for: u) }
        forgetAnnouncements(of: c, u, .main)
        forgetAnnouncements(of: c, u, .side)
        conversations[c].vacate(slot, id: users[u].id)
        if wasStale && conversations[c].staleSlots.isEmpty { staleConversations -= 1 }
        liveMemberships -= 1
        let next = memberships[link].next
        if next == link {
            users[u].memberships = .none
        } else {
            let previous = memberships[link].previous
            memberships[previous].next = next
            memberships[next].previous = previous
            if users[u].memberships == link { users[u].memberships = next }
        }
        memberships.remove(link)
        if users[u].memberships.isNone {
            userIndex.remove(hash: users[u].id.hash(seed: seed), record: u)
            users.remove(u)
            locales[u] = nil
            givenNames[u] = nil
        }
        if conversations[c].memberCount == 0 {
            conversationIndex.remove(hash: conversations[c].id.hash(seed: seed), record: c)
            conversations.remove(c)
        }
    }
}
