#if TYPINGD_INTERNAL_CHECKS
// The engine's invariant checker: compiled only into debug builds (`swift test`) and
// the fuzzer (see Package.swift), as swift-collections does with its internal checks.

extension Engine {
    /// What disagrees among the engine's structures: one sentence per problem found
    /// (checking stops early once the structures are too broken to walk safely).
    /// Empty when the engine is sound.
    ///
    /// A live streak is recorded in six places kept in step by hand: the streak
    /// slab, the live index by (conversation, user), its conversation's typer tree
    /// and member slot, its user's list and the timer queue. Members are recorded in
    /// their conversation's slots (and index), in their user's count and in the
    /// totals; an open view in the conversation's open slots and the user's open
    /// views. This walks all of them, checks each storage type's own invariants,
    /// that typers are in the configured order (named ones first), and that every
    /// viewer's indicator is up to date: rendering any conversation now would write
    /// nothing.
    ///
    /// It costs time in proportion to the whole state: for tests and the fuzzer,
    /// which call it after every step, never for the daemon.
    package func invariantViolations() -> [String] {
        var problems: [String] = []
        func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
            if !condition() { problems.append(message()) }
        }
        problems += users.violations().map { "users: " + $0 }
        problems += conversations.violations().map { "conversations: " + $0 }
        problems += streaks.violations().map { "streaks: " + $0 }
        problems += userIndex.violations().map { "user index: " + $0 }
        problems += conversationIndex.violations().map { "conversation index: " + $0 }
        problems += streakIndex.violations().map { "streak index: " + $0 }
        problems += timers.violations().map { "timers: " + $0 }
        guard problems.isEmpty else { return problems }

        var memberships = 0
        var membershipsOfUser: [Int32: Int] = [:]
        var openViewsOfUser: [Int32: Int] = [:]
        var streaksSeen = 0

        conversations.forEachLive { c, record in
            check(findConversation(record.id) == c, "conversation \(record.id) is not found by its id")
            let order = record.typers.violations(in: streaks, limit: streaks.count) { a, b in
                streaks.contains(a) && streaks.contains(b) && users.contains(streaks[a].user) && users.contains(streaks[b].user)
                    && (streaks[a].isNamed != streaks[b].isNamed ? streaks[a].isNamed : precedes(a, b))
            }
            problems += order.map { "the typers of \(record.id): " + $0 }
            guard order.isEmpty else { return }
            var typers: [Int32] = []
            record.typers.forEach(in: streaks) { s in
                typers.append(s)
                return true
            }
            guard typers.allSatisfy({ streaks.contains($0) && streaks[$0].conv == c }) else {
                problems.append("the typers of \(record.id) hold a streak that is freed or of another conversation")
                return
            }
            var occupied = 0
            var typing = 0
            var head: [Int32] = []
            record.typers.collect(first: max(configuration.maxListed + 1, 4), in: streaks, into: &head)
            for (slot, member) in record.members.enumerated() where member.isOccupied {
                occupied += 1
                guard users.contains(member.user) else {
                    problems.append("member slot \(slot) of \(record.id) holds a freed user")
                    continue
                }
                check(member.fingerprint == users[member.user].id.fingerprint,
                      "member slot \(slot) of \(record.id) has another user's fingerprint")
                check(record.slot(of: member.user) == slot, "member \(users[member.user].id) of \(record.id) is not found in its slot")
                membershipsOfUser[member.user, default: 0] += 1
                if record.isOpen(slot) {
                    openViewsOfUser[member.user, default: 0] += 1
                    check(openViews[user: member.user]?.contains(c) == true,
                          "the open view of \(users[member.user].id) in \(record.id) is not among the user's open views")
                }
                if member.streak >= 0 {
                    typing += 1
                    guard streaks.contains(member.streak) && streaks[member.streak].conv == c
                            && streaks[member.streak].user == member.user else {
                        problems.append("member \(users[member.user].id) of \(record.id) has a freed streak or another member's")
                        continue
                    }
                }
                guard configuration.audience == .members || record.isOpen(slot) else {
                    check(member.lastSent === IndicatorView.empty, "the closed view of \(users[member.user].id) in \(record.id) remembers what it was sent")
                    continue
                }
                var expected = record.fullView
                if member.streak >= 0 {
                    let rank = record.typers.rank(of: member.streak, in: streaks)
                    expected = typerView(of: c, rank: rank < head.count ? rank : .max,
                                         viewerIsNamed: users[member.user].isNamed, head: head,
                                         full: record.fullView, last: member.lastSent)
                }
                check(member.lastSent == expected, "member \(users[member.user].id) of \(record.id) was last sent \(member.lastSent.text.debugDescription), but sees \(expected.text.debugDescription)")
            }
            check(occupied == record.memberCount && occupied > 0, "conversation \(record.id) counts \(record.memberCount) members, holds \(occupied)")
            memberships += occupied
            check(typers.count == typing, "conversation \(record.id) lists \(typers.count) typers, its members have \(typing) streaks")
            let named = typers.prefix { streaks[$0].isNamed }.count
            check(named == record.typers.namedCount, "conversation \(record.id) counts \(record.typers.namedCount) named typers, lists \(named) first")
            check(typers.allSatisfy { streaks[$0].isNamed == users[streaks[$0].user].isNamed },
                  "a typer of \(record.id) is listed as named when they are not, or the other way")
            check(record.openSlots == record.openSlots.sorted() && Set(record.openSlots).count == record.openSlots.count
                  && record.openSlots.allSatisfy { Int($0) < record.members.count && record.members[Int($0)].isOccupied },
                  "the open slots of \(record.id) are not sorted occupied slots: \(record.openSlots)")
            if record.fullViewIsStale {
                check(configuration.audience == .open && record.openSlots.isEmpty,
                      "the shared view of \(record.id) is left stale while someone watches")
            } else {
                check(!fullView(of: c, head: head, previous: record.fullView).changed, "the shared view of \(record.id) is out of date")
            }
        }
        check(memberships == liveMemberships, "\(liveMemberships) memberships counted, \(memberships) held")
        check(conversationIndex.count == conversations.count, "the conversation index has \(conversationIndex.count) entries for \(conversations.count) conversations")
        guard problems.isEmpty else { return problems }

        users.forEachLive { u, record in
            check(findUser(record.id) == u, "user \(record.id) is not found by their id")
            check(record.memberships > 0 && Int(record.memberships) == membershipsOfUser[u] ?? 0,
                  "user \(record.id) counts \(record.memberships) memberships, holds \(membershipsOfUser[u] ?? 0)")
            var s = record.streaks.first, previous: Int32 = -1, count = 0
            while s >= 0 {
                guard streaks.contains(s) && streaks[s].user == u, count <= streaks.count else {
                    problems.append("the streak list of \(record.id) holds another's streak, or a cycle")
                    return
                }
                check(streaks[s].userPrevious == previous, "the streak list of \(record.id) is linked wrongly")
                if previous >= 0 { check(streaks[previous].started < streaks[s].started, "the streaks of \(record.id) are not in the order they began") }
                previous = s
                s = streaks[s].userNext
                count += 1
            }
            check(previous == record.streaks.last, "the streak list of \(record.id) has the wrong tail")
            check(count == 0 || record.sendsTyping, "user \(record.id) types while hidden")
            let open = openViews[user: u] ?? []
            check(open.count == openViewsOfUser[u] ?? 0,
                  "user \(record.id) lists \(open.count) open views, their memberships \(openViewsOfUser[u] ?? 0)")
            streaksSeen += count
        }
        check(userIndex.count == users.count, "the user index has \(userIndex.count) entries for \(users.count) users")
        check(streaksSeen == streaks.count, "users' lists hold \(streaksSeen) streaks, the slab \(streaks.count)")
        check(openViews.byUser.keys.allSatisfy { users.contains($0) } && openViews.byUser.values.allSatisfy { !$0.isEmpty },
              "the open views name a user who is gone, or an empty set")
        guard problems.isEmpty else { return problems }

        var alarms = 0
        for entry in timers.heap.unordered where streaks.contains(entry.streak) && streaks[entry.streak].alarm == entry.key {
            alarms += 1
        }
        streaks.forEachLive { s, streak in
            guard conversations.contains(streak.conv), users.contains(streak.user) else {
                problems.append("streak \(s) belongs to a freed conversation or user")
                return
            }
            let conv = conversations[streak.conv], user = users[streak.user]
            check(findStreak(conv: conv.id, user: user.id, hash: streak.pairHash) == s,
                  "the streak of \(user.id) in \(conv.id) is not in the live index")
            check(conv.slot(of: streak.user).map { conv.members[$0].streak } == s,
                  "the streak of \(user.id) in \(conv.id) is not their member slot's")
            check(streak.order.size > 0, "the streak of \(user.id) in \(conv.id) is not among its typers")
            check(streak.alarm <= streak.key, "the alarm of the streak of \(user.id) in \(conv.id) is after its deadline")
            check(streak.deadline >= now && streak.deadline <= Engine.maxTime,
                  "the streak of \(user.id) in \(conv.id) has the deadline \(streak.deadline) at \(now)")
            check(streak.keystroke <= keystrokes && streak.started <= streak.keystroke,
                  "the streak of \(user.id) in \(conv.id) has keystroke numbers from the future")
        }
        check(alarms == streaks.count, "\(alarms) alarms in the timer queue for \(streaks.count) streaks")
        check(streakIndex.count == streaks.count, "the live index has \(streakIndex.count) entries for \(streaks.count) streaks")
        check(now >= 0 && now <= Engine.maxTime, "the clock reads \(now)")
        return problems
    }

    /// Traps with a description of every disagreement ``invariantViolations()`` finds.
    package func checkInvariants() {
        let problems = invariantViolations()
        if !problems.isEmpty { preconditionFailure("Engine invariants: " + problems.joined(separator: "; ")) }
    }
}

extension Slab {
    /// What disagrees in the slab's bookkeeping; empty when sound.
    func violations() -> [String] {
        var problems: [String] = []
        if live.count != records.count { problems.append("\(live.count) liveness flags for \(records.count) records") }
        let liveCount = live.lazy.filter { $0 }.count
        if liveCount != count { problems.append("counts \(count) live records, holds \(liveCount)") }
        if let last = live.last, !last { problems.append("the last record is free (free records at the end are dropped)") }
        let free = freeNumbers
        if Set(free).count != free.count { problems.append("a free number is listed twice") }
        if free.contains(where: { live[Int($0)] }) { problems.append("a live record is listed as free") }
        if free.count != records.count - count { problems.append("lists \(free.count) free records of \(records.count - count)") }
        return problems
    }
}

extension IndexTable {
    /// What disagrees in the table; empty when sound.
    func violations() -> [String] {
        var problems: [String] = []
        let capacity = slots.count
        if capacity < IndexTable.minimumCapacity || capacity & (capacity - 1) != 0 {
            problems.append("has \(capacity) slots, not a power of two from \(IndexTable.minimumCapacity)")
            return problems
        }
        let occupied = slots.lazy.filter { $0 != 0 }.count
        if occupied != count { problems.append("counts \(count) entries, holds \(occupied)") }
        if count * 2 > capacity { problems.append("is more than half full (\(count) of \(capacity))") }
        // Every entry is reachable from its home: no empty slot between them.
        for (position, slot) in slots.enumerated() where slot != 0 {
            var probe = Int(truncatingIfNeeded: slot >> 32) & (capacity - 1)
            while probe != position {
                if slots[probe] == 0 {
                    problems.append("the entry at \(position) cannot be reached from its home")
                    break
                }
                probe = (probe + 1) & (capacity - 1)
            }
        }
        return problems
    }
}

extension TimerQueue {
    /// What disagrees in the queue; empty when sound.
    func violations() -> [String] {
        var problems: [String] = []
        if let min = heap.min, heap.unordered.contains(where: { $0 < min }) {
            problems.append("the earliest entry is not at the top")
        }
        if highWater < heap.count { problems.append("holds \(heap.count) entries, more than its high-water mark \(highWater)") }
        return problems
    }
}
#endif
