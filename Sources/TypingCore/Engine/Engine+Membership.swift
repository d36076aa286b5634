extension Engine {
    /// The conversation, user and member slot of `user` in `conv`, if a member.
    @inline(__always)
    func membership(of user: Identifier, in conv: Identifier) -> (conv: Int32, user: Int32, slot: Int)? {
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
    /// settings, and the indicators that changed (§D): the other conversations the
    /// user types in first, in streak order, when the join renames or hides them;
    /// then this one (a new member under `--audience members` gets the current
    /// indicator at once).
    mutating func join<S: EventSink & ~Copyable>(conv: Identifier, user: Identifier, name: String?, sendTyping: Bool?,
                                                 sink: inout S) -> Failure? {
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
        let change = applySettings(to: u, name: name, sendTyping: sendTyping)
        let newSlot = isMember ? nil : addMember(u, to: c)

        visitStreaks(of: u, except: c, for: change, sink: &sink)
        if change.touchesStreaks, let slot = conversations[c].slot(of: u), conversations[c].members[slot].streak >= 0 {
            update(conversations[c].members[slot].streak, for: change, sink: &sink)
        } else if let newSlot, configuration.audience == .members {
            render(c, scope: .member(newSlot), sink: &sink)
        }
        return nil
    }

    /// The `limit` failure a new membership in `existing` would cause, if any.
    func limitFailure(joining existing: Int32?, conv: Identifier) -> Failure? {
        if let c = existing, conversations[c].memberCount >= configuration.maxMembers {
            return Failure(
                code: .limit,
                message: "conversation \(Quote.id(conv)) already has \(configuration.maxMembers) members, the most --max-members allows",
                field: "conv")
        }
        if existing == nil && conversations.count >= configuration.maxConversations {
            return Failure(
                code: .limit,
                message: "there are already \(configuration.maxConversations) conversations, the most --max-conversations allows; \(Quote.id(conv)) would be a new one",
                field: "conv")
        }
        if liveMemberships >= configuration.maxMemberships {
            return Failure(
                code: .limit,
                message: "there are already \(configuration.maxMemberships) memberships in all, the most --max-memberships allows",
                field: "user")
        }
        return nil
    }

    /// `leave` and `remove`: stop the user's streak here, then end the membership.
    mutating func depart<S: EventSink & ~Copyable>(conv: Identifier, user: Identifier, by: Identifier?,
                                       reason: Event.Typing.Reason, sink: inout S) -> Failure? {
        guard let (c, u, slot) = membership(of: user, in: conv) else {
            return .notMember(user, of: conv, field: "user")
        }
        if let by, membership(of: by, in: conv) == nil {
            return .notMember(by, of: conv, field: "by")
        }
        let streak = conversations[c].members[slot].streak
        if streak >= 0 {
            stop(streak, reason: reason, render: false, sink: &sink)
        }
        closeView(of: u, in: c, slot: slot)
        let conversationGoes = conversations[c].memberCount == 1
        removeMember(u, slot: slot, from: c)
        if streak >= 0 && !conversationGoes {
            render(c, scope: .audience, sink: &sink)
        }
        return nil
    }

    /// Interns a new user, who has no name yet.
    mutating func createUser(_ id: Identifier) -> Int32 {
        let u = users.insert(UserRecord(id: id))
        userIndex.insert(hash: id.hash(seed: seed), record: u)
        return u
    }

    /// Interns a new, empty conversation.
    mutating func createConversation(_ id: Identifier) -> Int32 {
        let c = conversations.insert(ConversationRecord(id: id))
        conversationIndex.insert(hash: id.hash(seed: seed), record: c)
        return c
    }

    /// Appends user `u` to the members of `c` and returns the new slot.
    mutating func addMember(_ u: Int32, to c: Int32) -> Int {
        let slot = conversations[c].append(u, id: users[u].id)
        users[u].memberships += 1
        liveMemberships += 1
        return slot
    }

    /// Ends the membership of `u` (not typing) in `c`, freeing what is left unused:
    /// the user without memberships, the conversation without members.
    mutating func removeMember(_ u: Int32, slot: Int, from c: Int32) {
        conversations[c].vacate(slot)
        liveMemberships -= 1
        users[u].memberships -= 1
        if users[u].memberships == 0 {
            userIndex.remove(hash: users[u].id.hash(seed: seed), record: u)
            users.remove(u)
        }
        if conversations[c].memberCount == 0 {
            conversationIndex.remove(hash: conversations[c].id.hash(seed: seed), record: c)
            conversations.remove(c)
        }
    }
}
