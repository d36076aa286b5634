extension Engine {
    /// Checks that the engine's structures agree with each other, and traps with a
    /// description of the first disagreement.
    ///
    /// A live streak is recorded in five places kept in step by hand: the streak
    /// slab, the live index by (conversation, user), its conversation's typers and
    /// member slot, its user's list and the timer queue. Members are recorded in
    /// their conversation's slots (and index), in their user's count and in the
    /// totals; an open view in the member slot, the conversation's open slots and
    /// the user's open views. This walks all of them, checks that typers are in the
    /// configured order (named ones first), and that every viewer's indicator is up
    /// to date: rendering any conversation now would write nothing.
    ///
    /// It costs time in proportion to the whole state, so it is for tests and the
    /// fuzzer, which call it after every step, not for the daemon.
    public func checkInvariants() {
        var memberships = 0
        var membershipsOfUser: [Int32: Int] = [:]
        var openViewsOfUser: [Int32: Int] = [:]
        var streaksSeen = 0

        conversations.forEachLive { c, record in
            check(findConversation(record.id) == c, "conversation \(record.id) is not found by its id")
            var occupied = 0
            var typing = 0
            for (slot, member) in record.members.enumerated() where member.isOccupied {
                occupied += 1
                check(users.contains(member.user), "member slot \(slot) of \(record.id) holds a freed user")
                check(member.fingerprint == users[member.user].id.fingerprint,
                      "member slot \(slot) of \(record.id) has another user's fingerprint")
                check(record.slot(of: member.user) == slot, "member \(users[member.user].id) of \(record.id) is not found in its slot")
                membershipsOfUser[member.user, default: 0] += 1
                if record.isOpen(slot) {
                    openViewsOfUser[member.user, default: 0] += 1
                    check(openViews[member.user]?.contains(c) == true,
                          "the open view of \(users[member.user].id) in \(record.id) is not among the user's open views")
                }
                if member.streak >= 0 {
                    typing += 1
                    check(streaks.contains(member.streak), "member \(users[member.user].id) of \(record.id) has a freed streak")
                    check(streaks[member.streak].conv == c && streaks[member.streak].user == member.user,
                          "member \(users[member.user].id) of \(record.id) has another member's streak")
                }
                guard configuration.audience == .members || record.isOpen(slot) else {
                    check(member.lastSent === IndicatorView.empty, "the closed view of \(users[member.user].id) in \(record.id) remembers what it was sent")
                    continue
                }
                var expected = record.fullView
                if member.streak >= 0, let rank = record.typers.firstIndex(of: member.streak) {
                    expected = typerView(of: c, rank: rank, viewerIsNamed: users[member.user].isNamed,
                                         full: record.fullView, last: member.lastSent)
                }
                check(member.lastSent == expected, "member \(users[member.user].id) of \(record.id) was last sent \(member.lastSent.text.debugDescription), but sees \(expected.text.debugDescription)")
            }
            check(occupied == record.memberCount && occupied > 0, "conversation \(record.id) counts \(record.memberCount) members, holds \(occupied)")
            memberships += occupied
            check(record.typers.count == typing, "conversation \(record.id) lists \(record.typers.count) typers, its members have \(typing) streaks")
            check(Set(record.typers).count == record.typers.count, "conversation \(record.id) lists a typer twice")
            let named = record.typers.prefix { users[streaks[$0].user].isNamed }.count
            check(named == record.namedCount, "conversation \(record.id) counts \(record.namedCount) named typers, lists \(named) first")
            check(record.typers.dropFirst(named).allSatisfy { !users[streaks[$0].user].isNamed },
                  "a named typer of \(record.id) is listed among the unnamed")
            for (index, (a, b)) in zip(record.typers, record.typers.dropFirst()).enumerated() where index + 1 != named {
                check(precedes(a, b), "the typers of \(record.id) are not in \(configuration.order) order")
            }
            check(record.openSlots == record.openSlots.sorted() && Set(record.openSlots).count == record.openSlots.count
                  && record.openSlots.allSatisfy { Int($0) < record.members.count && record.members[Int($0)].isOccupied },
                  "the open slots of \(record.id) are not sorted occupied slots: \(record.openSlots)")
            check(!fullView(of: c, previous: record.fullView).changed, "the shared view of \(record.id) is out of date")
        }
        check(memberships == liveMemberships, "\(liveMemberships) memberships counted, \(memberships) held")
        check(conversationIndex.count == conversations.count, "the conversation index has \(conversationIndex.count) entries for \(conversations.count) conversations")

        users.forEachLive { u, record in
            check(findUser(record.id) == u, "user \(record.id) is not found by their id")
            check(record.memberships > 0 && Int(record.memberships) == membershipsOfUser[u] ?? 0,
                  "user \(record.id) counts \(record.memberships) memberships, holds \(membershipsOfUser[u] ?? 0)")
            var s = record.streaks.first, previous: Int32 = -1, count = 0
            while s >= 0 {
                check(streaks.contains(s) && streaks[s].user == u, "the streak list of \(record.id) holds another's streak")
                check(streaks[s].userPrevious == previous, "the streak list of \(record.id) is linked wrongly")
                if previous >= 0 { check(streaks[previous].started < streaks[s].started, "the streaks of \(record.id) are not in the order they began") }
                previous = s
                s = streaks[s].userNext
                count += 1
                check(count <= streaks.count, "the streak list of \(record.id) has a cycle")
            }
            check(previous == record.streaks.last, "the streak list of \(record.id) has the wrong tail")
            check(count == 0 || record.sendsTyping, "user \(record.id) types while hidden")
            let open = openViews[u] ?? []
            check(open.count == openViewsOfUser[u] ?? 0 && Set(open).count == open.count,
                  "user \(record.id) lists \(open.count) open views, their memberships \(openViewsOfUser[u] ?? 0)")
            streaksSeen += count
        }
        check(userIndex.count == users.count, "the user index has \(userIndex.count) entries for \(users.count) users")
        check(streaksSeen == streaks.count, "users' lists hold \(streaksSeen) streaks, the slab \(streaks.count)")
        check(openViews.keys.allSatisfy { users.contains($0) } && openViews.values.allSatisfy { !$0.isEmpty },
              "the open views name a user who is gone, or an empty list")

        var alarms = 0
        for entry in timers.heap.unordered where streaks.contains(entry.streak) && streaks[entry.streak].alarm == entry.key {
            alarms += 1
        }
        streaks.forEachLive { s, streak in
            let conv = conversations[streak.conv], user = users[streak.user]
            check(findStreak(conv: conv.id, user: user.id, hash: streak.pairHash) == s,
                  "the streak of \(user.id) in \(conv.id) is not in the live index")
            check(conv.slot(of: streak.user).map { conv.members[$0].streak } == s,
                  "the streak of \(user.id) in \(conv.id) is not their member slot's")
            check(conv.typers.contains(s), "the streak of \(user.id) in \(conv.id) is not among its typers")
            check(streak.isNamed == user.isNamed, "the streak of \(user.id) in \(conv.id) has a stale named flag")
            check(streak.alarm <= streak.key, "the alarm of the streak of \(user.id) in \(conv.id) is after its deadline")
            check(streak.deadline >= now && streak.deadline <= Engine.maxTime,
                  "the streak of \(user.id) in \(conv.id) has the deadline \(streak.deadline) at \(now)")
            check(streak.keystroke <= keystrokes && streak.started <= streak.keystroke,
                  "the streak of \(user.id) in \(conv.id) has keystroke numbers from the future")
        }
        check(alarms == streaks.count, "\(alarms) alarms in the timer queue for \(streaks.count) streaks")
        check(streakIndex.count == streaks.count, "the live index has \(streakIndex.count) entries for \(streaks.count) streaks")
        check(now >= 0 && now <= Engine.maxTime, "the clock reads \(now)")
    }

    /// Traps with `message` unless `condition` holds.
    private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        if !condition() { preconditionFailure("Engine invariant: " + message()) }
    }
}
