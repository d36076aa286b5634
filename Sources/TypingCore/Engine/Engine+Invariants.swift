// The engine's invariant checker. It exists in every build, so that the tests compile
// in any configuration; without TYPINGD_INTERNAL_CHECKS (defined only for debug builds,
// which `swift test` runs, and the fuzzer; see Package.swift) its bodies are empty and it
// finds nothing, as swift-collections' `_checkInvariants()` without
// COLLECTIONS_INTERNAL_CHECKS. Tests that need it ask `Engine.hasInvariantChecker`.

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
        #if TYPINGD_INTERNAL_CHECKS
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

        var membershipCount = 0
        var membershipsOfUser: [UserIndex: Int] = [:]
        var openViewsOfUser: [UserIndex: Int] = [:]
        var sidePanesOfUser: [UserIndex: Int] = [:]
        var streaksSeen = 0

        conversations.forEachLive { c, record in
            check(findConversation(record.id) == c, "conversation \(record.id) is not found by its id")
            var locations: [Location] = [.main]
            record.threads.forEachLocation { locations.append($0) }
            var typing = 0
            var frames: [Location: RenderFrame] = [:]
            for location in locations {
                let problemsBefore = problems.count
                checkLocation(location, of: c, into: &problems)
                guard problems.count == problemsBefore else { return }
                let state = record[location: location]
                typing += state.typers.count(in: streaks)
                var typers: [StreakIndex] = []
                state.typers.collect(first: state.typers.count(in: streaks), in: streaks, into: &typers)
                check(
                    state.typerNameLengths
                        == LengthTally(counting: typers.map { Int32(clamping: users[streaks[$0].user].nameBound) }),
                    "the name lengths tallied at \(location) of \(record.id) are not its typers' names'")
                if location != .main {
                    let thread = record.threads[location]
                    check(!thread.isUnused, "thread \(thread.id) of \(record.id) is kept with no typer and no viewer")
                    check(
                        record.threads.location(of: thread.id) == location,
                        "thread \(thread.id) of \(record.id) is not found by its id")
                    let here = record.members.indices.filter {
                        record.members[$0].isOccupied && record.members[$0].location == location
                    }
                    problems += thread.viewers.violations().map {
                        "the viewers of thread \(thread.id) of \(record.id): " + $0
                    }
                    check(
                        thread.viewers.elements == here.filter { record.members[$0].receives },
                        "the viewers of thread \(thread.id) of \(record.id) are not the sorted slots of the members there who receive typing: \(thread.viewers)"
                    )
                    check(
                        Int(thread.silent) == here.filter { !record.members[$0].receives }.count,
                        "thread \(thread.id) of \(record.id) counts \(thread.silent) members there who receive nothing")
                    let sides = record.members.indices.filter {
                        record.members[$0].isOccupied && record.members[$0].side == location
                    }
                    problems += thread.sideViewers.violations().map {
                        "the side viewers of thread \(thread.id) of \(record.id): " + $0
                    }
                    check(
                        thread.sideViewers.elements == sides.filter { record.members[$0].receives },
                        "the side viewers of thread \(thread.id) of \(record.id) are not the members whose side pane is there and who receive typing"
                    )
                    check(
                        Int(thread.sideSilent) == sides.filter { !record.members[$0].receives }.count,
                        "thread \(thread.id) of \(record.id) counts \(thread.sideSilent) side panes there of members who receive nothing"
                    )
                }
                var head: [StreakIndex] = []
                state.typers.collect(
                    first: max(
                        min(state.typers.count(in: streaks), configuration.maxListed + 1),
                        min(state.typers.count(in: streaks), 4)),
                    in: streaks, into: &head)
                let groups = groupInfo(of: c, at: location)
                if state.fullViewIsStale {
                    // Above --quiet-above, nobody is shown it: it is rebuilt when the room is back.
                    check(
                        record.isHushed
                            || !record.members.enumerated().contains { slot, member in
                                member.isOccupied && member.receives
                                    && (member.location == location
                                        && (configuration.audience == .members || record.isOpen(slot))
                                        && !record.isStale(slot)
                                        || member.side == location)
                            },
                        "the shared view of \(record.id) at \(location) is left stale while someone watches")
                } else {
                    let (rebuilt, changed) = fullView(
                        of: c, at: location, head: head, groups: groups, previous: state.fullView)
                    check(!changed, "the shared view of \(record.id) at \(location) is out of date")
                    // Its content aside, it packs one typer more than it lists, for the
                    // typers' own views: those must be the first ones too.
                    check(
                        changed || rebuilt === state.fullView,
                        "the shared view of \(record.id) at \(location) packs other typers than the first ones")
                }
                frames[location] = RenderFrame(
                    conv: c, location: location, head: head, full: state.fullView,
                    stale: nil, staleChanged: false, groups: groups)
            }
            var occupied = 0
            var streaksOfMembers = 0
            for (slot, member) in record.members.enumerated() where member.isOccupied {
                occupied += 1
                guard users.contains(member.user) else {
                    problems.append("member slot \(slot) of \(record.id) holds a freed user")
                    continue
                }
                let who = "member \(users[member.user].id) of \(record.id)"
                check(
                    member.fingerprint == users[member.user].id.fingerprint,
                    "member slot \(slot) of \(record.id) has another user's fingerprint")
                check(record.slot(of: member.user) == slot, "\(who) is not found in their slot")
                check(
                    memberships.contains(member.link) && memberships[member.link].conv == c,
                    "\(who) names a membership link of another conversation")
                membershipsOfUser[member.user, default: 0] += 1
                check(
                    member.table == table(of: member.user),
                    "\(who) has table \(member.table), their user \(table(of: member.user))")
                check(
                    member.receives == users[member.user].receivesTyping,
                    "\(who) does not copy their user's receive_typing")
                let isOpen = record.isOpen(slot)
                if isOpen {
                    openViewsOfUser[member.user, default: 0] += 1
                    check(
                        openViews[user: member.user]?.contains(c) == true,
                        "the open view of \(users[member.user].id) in \(record.id) is not among the user's open views")
                } else {
                    check(
                        member.location == .main && !member.isList, "\(who) has a closed view that is not the main chat"
                    )
                }
                check(!member.isList || member.location == .main, "\(who) has a list view at a thread")
                guard frames[member.location] != nil else {
                    problems.append("\(who) is at location \(member.location), which is not in use")
                    continue
                }
                if !member.streak.isNone {
                    streaksOfMembers += 1
                    guard
                        streaks.contains(member.streak) && streaks[member.streak].conv == c
                            && streaks[member.streak].user == member.user
                    else {
                        problems.append("\(who) has a freed streak or another member's")
                        continue
                    }
                }
                if member.side >= .main {
                    guard member.side > .main, let sideFrame = frames[member.side] else {
                        problems.append("\(who) has a side pane at \(member.side), which is not a thread in use")
                        continue
                    }
                    check(
                        record.sideSent[Int32(slot)] != nil, "\(who) has a side pane but nothing recorded as sent to it"
                    )
                    check(
                        sidePanes[user: member.user]?.contains(c) == true,
                        "the side pane of \(users[member.user].id) in \(record.id) is not among the user's side panes")
                    sidePanesOfUser[member.user, default: 0] += 1
                    if member.receives {
                        let expected =
                            record.isHushed
                            ? IndicatorView.empty : expectedView(of: slot, in: c, frame: sideFrame, pane: .side)
                        check(
                            record.sideLastSent(of: slot) == expected,
                            "\(who)'s side pane was last sent \(record.sideLastSent(of: slot).text.debugDescription), but shows \(expected.text.debugDescription)"
                        )
                    } else {
                        check(
                            record.sideLastSent(of: slot) === IndicatorView.empty,
                            "\(who) receives no typing but their side pane remembers what it was sent")
                    }
                } else {
                    check(
                        record.sideSent[Int32(slot)] == nil,
                        "\(who) has no side pane but something recorded as sent to one")
                }
                if record.isStale(slot) {
                    check(
                        configuration.audience == .members && !isOpen && member.receives
                            && member.lastSent === IndicatorView.empty,
                        "\(who) waits to be compared, but is not a closed, receiving member holding nothing")
                    continue
                }
                guard member.receives && (configuration.audience == .members || isOpen) else {
                    check(
                        member.lastSent === IndicatorView.empty,
                        "\(who) is not in the audience but remembers what they were sent")
                    continue
                }
                // Above --quiet-above, every screen shows the empty indicator.
                let expected =
                    record.isHushed
                    ? IndicatorView.empty : expectedView(of: slot, in: c, frame: frames[member.location]!)
                check(
                    member.lastSent == expected,
                    "\(who) was last sent \(member.lastSent.text.debugDescription), but sees \(expected.text.debugDescription)"
                )
            }
            check(
                record.memberIDLengths
                    == LengthTally(
                        counting: record.members.filter(\.isOccupied).map {
                            Int32(users[$0.user].id.encodedBound)
                        }), "the id lengths tallied in \(record.id) are not its members' ids'")
            check(
                record.isHushed == (configuration.quietAbove.map { record.memberCount > $0 } ?? false),
                "\(record.id) has \(record.memberCount) members and is \(record.isHushed ? "" : "not ")hushed under --quiet-above \(configuration.quietAbove.map(String.init) ?? "none")"
            )
            check(
                occupied == record.memberCount && occupied > 0,
                "conversation \(record.id) counts \(record.memberCount) members, holds \(occupied)")
            membershipCount += occupied
            check(
                typing == streaksOfMembers,
                "conversation \(record.id) lists \(typing) typers, its members have \(streaksOfMembers) streaks")
            problems += record.openSlots.violations().map { "the open slots of \(record.id): " + $0 }
            check(
                record.openSlots.elements.allSatisfy { $0 < record.members.count && record.members[$0].isOccupied },
                "the open slots of \(record.id) are not occupied slots: \(record.openSlots.elements)")
            problems += record.mainAudience.violations().map { "the main audience of \(record.id): " + $0 }
            let audience = record.members.indices.filter {
                record.members[$0].isOccupied && record.members[$0].location == .main && record.members[$0].receives
                    && (configuration.audience == .members || record.isOpen($0))
            }
            check(
                record.mainAudience.elements == audience,
                "the main audience of \(record.id) is \(record.mainAudience.elements), not the members who see the main timeline \(audience)"
            )
            check(
                record.staleSlots.elements.allSatisfy { record.mainAudience.contains($0) },
                "a stale member of \(record.id) is not in the main audience")
            problems += record.staleSlots.violations().map { "the stale slots of \(record.id): " + $0 }
            check(
                record.staleSlots.elements.allSatisfy { $0 < record.members.count && record.members[$0].isOccupied },
                "the stale slots of \(record.id) are not occupied slots: \(record.staleSlots.elements)")
        }
        for screen in announcements.screens {
            let live =
                conversations.contains(screen.conv) && users.contains(screen.user)
                && conversations[screen.conv].slot(of: screen.user).map {
                    !screen.side || conversations[screen.conv].members[$0].side > .main
                } == true
            check(
                configuration.announceAfter != nil && live,
                "an announcement is kept for a screen that is gone (conversation \(screen.conv), user \(screen.user), side \(screen.side))"
            )
        }
        check(
            announcements.pending.values.allSatisfy { $0.due >= now }, "an announcement due before now is still pending"
        )
        if configuration.announceAfter != nil {
            // A screen showing a sentence will announce it or has, unless a
            // hand-sent restore muted it: what lets a snapshot leave out the
            // screens without announcement keys (their replay schedules nothing;
            // Protocol.md#snapshots).
            for c in conversations.liveIndices {
                let record = conversations[c]
                for slot in record.members.indices where record.members[slot].isOccupied {
                    let u = record.members[slot].user
                    for side in [false, true] {
                        let text = (side ? record.sideLastSent(of: slot) : record.lastSent(of: slot)).text
                        let screen = ScreenKey(conv: c, user: u, side: side)
                        check(
                            text.isEmpty || announcements.pending[screen] != nil
                                || announcements.lastAnnounced(screen).sameBytes(as: text)
                                || announcements.muted.contains(screen),
                            "\(record.id) shows \(users[u].id) \(side ? "in the side pane " : "")\(Quote.string(text)), which is neither pending nor announced"
                        )
                    }
                }
            }
        }
        check(membershipCount == liveMemberships, "\(liveMemberships) memberships counted, \(membershipCount) held")
        check(
            membershipCount == memberships.count,
            "\(memberships.count) membership links for \(membershipCount) memberships")
        problems += memberships.violations().map { "membership links: " + $0 }
        check(locales.keys.allSatisfy { users.contains($0) }, "a locale is kept for a user who is gone")
        check(givenNames.keys.allSatisfy { users.contains($0) }, "a given name is kept for a user who is gone")
        check(
            givenNames.storage.allSatisfy { u, name in
                users.contains(u) && users[u].isNamed
                    && (DisplayName.render(name) ?? "").sameBytes(as: users[u].displayName)
                    && !name.sameBytes(as: users[u].displayName)
            },
            "a given name is kept that is not the user's shown name cut or cleaned")
        check(
            locales.values.allSatisfy { Int($0.table) == configuration.phrases.table(for: $0.tag) },
            "a user's table is not the one their locale chooses")
        check(
            conversationIndex.count == conversations.count,
            "the conversation index has \(conversationIndex.count) entries for \(conversations.count) conversations")
        guard problems.isEmpty else { return problems }

        users.forEachLive { u, record in
            check(findUser(record.id) == u, "user \(record.id) is not found by their id")
            var links = 0, link = record.memberships
            if !link.isNone {
                repeat {
                    guard memberships.contains(link), links <= memberships.count else {
                        problems.append("the membership list of \(record.id) holds a freed link, or a cycle")
                        return
                    }
                    let conv = memberships[link].conv
                    check(
                        conversations.contains(conv)
                            && conversations[conv].slot(of: u).map { conversations[conv].members[$0].link } == link,
                        "the membership list of \(record.id) names a conversation they are not in, or another slot's link"
                    )
                    check(
                        memberships[memberships[link].next].previous == link,
                        "the membership list of \(record.id) is linked wrongly")
                    links += 1
                    link = memberships[link].next
                } while link != record.memberships
            }
            check(
                links > 0 && links == membershipsOfUser[u] ?? 0,
                "user \(record.id) lists \(links) memberships, holds \(membershipsOfUser[u] ?? 0)")
            var s = record.streaks.first, previous = StreakIndex.none, count = 0
            while !s.isNone {
                guard streaks.contains(s) && streaks[s].user == u, count <= streaks.count else {
                    problems.append("the streak list of \(record.id) holds another's streak, or a cycle")
                    return
                }
                check(streaks[s].userPrevious == previous, "the streak list of \(record.id) is linked wrongly")
                if !previous.isNone {
                    check(
                        streaks[previous].started < streaks[s].started,
                        "the streaks of \(record.id) are not in the order they began")
                }
                previous = s
                s = streaks[s].userNext
                count += 1
            }
            check(previous == record.streaks.last, "the streak list of \(record.id) has the wrong tail")
            check(count == 0 || record.sendsTyping, "user \(record.id) types while hidden")
            let open = openViews[user: u] ?? []
            check(
                open.count == openViewsOfUser[u] ?? 0,
                "user \(record.id) lists \(open.count) open views, their memberships \(openViewsOfUser[u] ?? 0)")
            let sides = sidePanes[user: u] ?? []
            check(
                sides.count == sidePanesOfUser[u] ?? 0,
                "user \(record.id) lists \(sides.count) side panes, their memberships \(sidePanesOfUser[u] ?? 0)")
            streaksSeen += count
        }
        check(userIndex.count == users.count, "the user index has \(userIndex.count) entries for \(users.count) users")
        check(streaksSeen == streaks.count, "users' lists hold \(streaksSeen) streaks, the slab \(streaks.count)")
        var statusStreaks = 0
        streaks.forEachLive { s, record in
            guard record.activity == .status else { return }
            statusStreaks += 1
            check(statusWords[s] != nil, "status streak \(s) has no words kept")
        }
        check(
            statusWords.count == statusStreaks,
            "status words are kept for \(statusWords.count) streaks, \(statusStreaks) have the status activity")
        var staleSeen = 0
        conversations.forEachLive { _, record in if !record.staleSlots.isEmpty { staleSeen += 1 } }
        check(
            staleSeen == staleConversations,
            "\(staleSeen) conversations have stale members, staleConversations says \(staleConversations)")
        check(
            openViews.count == openViews.byUser.values.reduce(0) { $0 + $1.count },
            "openViews.count \(openViews.count) is not the number of open views")
        check(
            openViews.byUser.keys.allSatisfy { users.contains($0) }
                && openViews.byUser.values.allSatisfy { !$0.isEmpty },
            "the open views name a user who is gone, or an empty set")
        guard problems.isEmpty else { return problems }

        var alarms = 0
        for entry in timers.heap.unordered
        where streaks.contains(entry.streak) && streaks[entry.streak].alarm == entry.key {
            alarms += 1
        }
        streaks.forEachLive { s, streak in
            guard conversations.contains(streak.conv), users.contains(streak.user) else {
                problems.append("streak \(s) belongs to a freed conversation or user")
                return
            }
            let conv = conversations[streak.conv], user = users[streak.user]
            check(
                findStreak(conv: conv.id, user: user.id, hash: streak.pairHash) == s,
                "the streak of \(user.id) in \(conv.id) is not in the live index")
            check(
                conv.slot(of: streak.user).map { conv.members[$0].streak } == s,
                "the streak of \(user.id) in \(conv.id) is not their member slot's")
            check(streak.order.size > 0, "the streak of \(user.id) in \(conv.id) is not among its typers")
            check(
                streak.location == .main || conv.threads.contains(streak.location),
                "the streak of \(user.id) in \(conv.id) is at a thread not in use")
            check(
                streak.alarm <= streak.key, "the alarm of the streak of \(user.id) in \(conv.id) is after its deadline")
            check(
                streak.deadline >= now && streak.deadline <= Engine.maxTime,
                "the streak of \(user.id) in \(conv.id) has the deadline \(streak.deadline) at \(now)")
            check(
                streak.keystroke <= keystrokes && streak.started <= streak.keystroke,
                "the streak of \(user.id) in \(conv.id) has keystroke numbers from the future")
        }
        check(alarms == streaks.count, "\(alarms) alarms in the timer queue for \(streaks.count) streaks")
        check(
            streakIndex.count == streaks.count,
            "the live index has \(streakIndex.count) entries for \(streaks.count) streaks")
        check(now >= 0 && now <= Engine.maxTime, "the clock reads \(now)")
        return problems
        #else
        return []
        #endif
    }

    /// Traps with a description of every disagreement ``invariantViolations()`` finds.
    package func checkInvariants() {
        let problems = invariantViolations()
        if !problems.isEmpty { preconditionFailure("Engine invariants: " + problems.joined(separator: "; ")) }
    }
}

#if TYPINGD_INTERNAL_CHECKS
extension Engine {
    /// Checks the typers at `location` of `c`: the tree's shape and order (named
    /// first, then the configured order), the named count, that each streak there
    /// says it is there, and the activity groups: kept exactly while someone does
    /// something else than type, each holding the typers doing its activity, in
    /// the same order.
    func checkLocation(_ location: Location, of c: ConversationIndex, into problems: inout [String]) {
        let record = conversations[c]
        let state = record[location: location]
        let place = location == .main ? "\(record.id)" : "\(record.id), thread \(record.threads[location].id)"
        let ordered: (StreakIndex, StreakIndex) -> Bool = { a, b in
            streaks.contains(a) && streaks.contains(b) && users.contains(streaks[a].user)
                && users.contains(streaks[b].user)
                && (streaks[a].isNamed != streaks[b].isNamed ? streaks[a].isNamed : precedes(a, b))
        }
        let order = state.typers.violations(in: streaks, limit: streaks.count, precedes: ordered)
        problems += order.map { "the typers of \(place): " + $0 }
        guard order.isEmpty else { return }
        var typers: [StreakIndex] = []
        state.typers.forEach(in: streaks) { s in
            typers.append(s)
            return true
        }
        guard typers.allSatisfy({ streaks.contains($0) && streaks[$0].conv == c && streaks[$0].location == location })
        else {
            problems.append(
                "the typers of \(place) hold a streak that is freed, or of another conversation or location")
            return
        }
        let named = typers.prefix { streaks[$0].isNamed }.count
        if named != state.typers.namedCount {
            problems.append("\(place) counts \(state.typers.namedCount) named typers, lists \(named) first")
        }
        if !typers.allSatisfy({ streaks[$0].isNamed == users[streaks[$0].user].isNamed }) {
            problems.append("a typer of \(place) is listed as named when they are not, or the other way")
        }
        guard let groups = state.groups else {
            if typers.contains(where: { streaks[$0].activity != .typing }) {
                problems.append("\(place) keeps no activity groups, though someone there does something else than type")
            }
            return
        }
        if typers.isEmpty { problems.append("\(place) keeps activity groups with nobody typing") }
        for activity in Activity.allCases {
            let tree = groups.trees[Int(activity.rawValue)]
            problems += tree.violations(in: streaks, limit: streaks.count, precedes: ordered)
                .map { "the \(activity.name) group of \(place): " + $0 }
            var members: [StreakIndex] = []
            tree.forEach(in: streaks) { s in
                members.append(s)
                return true
            }
            if members != typers.filter({ streaks[$0].activity == activity }) {
                problems.append("the \(activity.name) group of \(place) does not hold exactly its typers, in order")
            }
            if tree.namedCount != members.filter({ streaks[$0].isNamed }).count {
                problems.append("the \(activity.name) group of \(place) miscounts its named typers")
            }
        }
    }

    /// What member `slot` of `c` should have been sent last: the view at their
    /// location (`frame`), in their table and style, without themselves if they
    /// type there.
    func expectedView(of slot: Int, in c: ConversationIndex, frame: RenderFrame, pane: Command.Pane = .main)
        -> IndicatorView
    {
        var member = conversations[c].members[slot]
        if pane == .side {
            // A side pane: at its thread, phrased with --style.
            member.location = member.side
            member.isList = false
            member.lastSent = conversations[c].sideLastSent(of: slot)
        }
        let key = Engine.variant(table: member.table, list: member.isList)
        if !member.streak.isNone && streaks[member.streak].location == member.location {
            let rank = conversations[c][location: member.location].typers.rank(of: member.streak, in: streaks)
            return typerView(
                member.streak, rank: rank < frame.head.count ? rank : .max, frame: frame, variant: key,
                last: member.lastSent)
        }
        guard key != defaultVariant, frame.full.typerCount > 0 else { return frame.full }
        var text: [UInt8] = []
        appendPhrase(frame: frame, excluding: .none, rank: .max, variant: key, into: &text)
        return IndicatorView(
            base: frame.full, omitting: -1, listed: frame.full.listed, more: frame.full.more, text: text)
    }
}
#endif

extension Slab {
    /// What disagrees in the slab's bookkeeping; empty when sound.
    func violations() -> [String] {
        #if TYPINGD_INTERNAL_CHECKS
        var problems: [String] = []
        if live.count != records.count { problems.append("\(live.count) liveness flags for \(records.count) records") }
        let liveCount = live.lazy.filter { $0 }.count
        if liveCount != count { problems.append("counts \(count) live records, holds \(liveCount)") }
        if let last = live.last, !last {
            problems.append("the last record is free (free records at the end are dropped)")
        }
        let free = freeNumbers
        if Set(free).count != free.count { problems.append("a free number is listed twice") }
        if free.contains(where: { live[Int($0.rawValue)] }) { problems.append("a live record is listed as free") }
        if free.count != records.count - count {
            problems.append("lists \(free.count) free records of \(records.count - count)")
        }
        return problems
        #else
        return []
        #endif
    }
}

extension IndexTable {
    /// What disagrees in the table; empty when sound.
    package func violations() -> [String] {
        #if TYPINGD_INTERNAL_CHECKS
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
        #else
        return []
        #endif
    }
}

extension TimerQueue {
    /// What disagrees in the queue; empty when sound.
    func violations() -> [String] {
        #if TYPINGD_INTERNAL_CHECKS
        var problems: [String] = []
        if let min = heap.min, heap.unordered.contains(where: { $0 < min }) {
            problems.append("the earliest entry is not at the top")
        }
        if highWater < heap.count {
            problems.append("holds \(heap.count) entries, more than its high-water mark \(highWater)")
        }
        return problems
        #else
        return []
        #endif
    }
}
