/// Which viewers of a conversation a render looks at. Every render also compares
/// the conversation's stale members (see ``ConversationRecord/staleSlots``), and
/// visits viewers in join order whatever their location.
enum RenderScope {
    /// The audience at one location, whose typers changed: every member there
    /// (`--audience members`) or those whose view is open (`--audience open`).
    case location(Location)
    /// The audiences of two locations whose typers changed (a streak moved).
    case locations(Location, Location)
    /// One member slot, whose screen, table or setting changed (a member who just
    /// joined, whose view opened, who changed language).
    case member(Int)
    /// The audience of a location whose typers changed, and one member slot
    /// wherever it is (an `open` that stopped the opener's streak).
    case locationAndMember(Location, Int)
    /// Only the stale members: a command named the conversation but changed none
    /// of its typers, and the screens that were forgotten are told what they show
    /// (see ``Engine/renderForgotten(_:sink:)``).
    case forgotten
}

/// What a render knows about one location: its first typers, its shared view and
/// the one it replaced, and, where typers do different things, their groups.
struct RenderFrame {
    var conv: ConversationIndex
    var location: Location
    /// The first typers (the shared view's packed entries, and at least four), once
    /// ``hasHead`` (a frame that reuses its shared view collects them only when a
    /// phrase needs them).
    var head: [StreakIndex]
    var hasHead = true
    /// The shared view (variant 0: the default table, `--style`).
    var full: IndicatorView
    /// The shared view this render replaced, if any, and whether its content differs.
    var stale: IndicatorView?
    var staleChanged: Bool
    /// The location's activity groups, in the order of their first typer (nil:
    /// everyone types).
    var groups: [GroupInfo]?
    /// Other variants built in this render: key, view, the view it replaced, and
    /// whether the content differs.
    var variants: [(key: UInt32, view: IndicatorView, stale: IndicatorView?, changed: Bool)] = []
    /// Where each key is in ``variants``, once there are more than
    /// ``VariantViews/linearLimit`` (a room whose viewers read many languages): a
    /// lookup per viewer stays O(1), not O(languages).
    var variantIndex: [UInt32: Int]?

    /// A frame of no location, for a slot of ``RenderFrames`` not in use.
    @inline(__always)
    static func unused() -> RenderFrame {
        RenderFrame(conv: .none, location: -1, head: [], full: .empty, stale: nil, staleChanged: false, groups: nil)
    }
}

/// One activity's typers at a location, as a phrase needs them.
struct GroupInfo {
    var activity: Activity
    /// Typers doing it, and how many of them are named.
    var count: Int
    var named: Int
    /// Its first typers (up to four), in order: the names a clause shows come from
    /// these.
    var firsts: [StreakIndex]
    /// The place of its first and second typers among all the location's typers
    /// (the groups' order; the second counts when the first is the viewer).
    var firstRank: Int
    var secondRank: Int
}

extension Engine {
    /// The key of a variant of a shared view: the table and whether it is phrased
    /// for a chat-list row.
    @inline(__always)
    static func variant(table: UInt16, list: Bool) -> UInt32 {
        UInt32(table) << 1 | (list ? 1 : 0)
    }

    /// The variant every shared view is built in: the default table, `--style`.
    @inline(__always)
    var defaultVariant: UInt32 { defaultVariantKey }

    /// Writes an `indicator` event for each viewer in `scope`, and each stale
    /// member, whose view differs from what they were last sent, in join order.
    ///
    /// Every viewer at a location who is not typing there sees the same view, in
    /// their table and style: the location's shared view (built once per render, in
    /// O(min(typers, max-listed))), or a variant of it with its own phrase, built once
    /// per (table, style) the render meets. A member who holds the previous one is
    /// known to need the new one when its content changed. Typers (who see everyone
    /// but themselves) get views derived from it. The work is the first typers
    /// (O(listed + log typers)) plus the viewers in scope: at a thread, its viewers
    /// who receive typing; at the main timeline, its audience (``ConversationRecord/mainAudience``:
    /// members who receive nothing and screens elsewhere are never visited); and a
    /// location nobody in scope looks at is not built at all (the shared view is
    /// rebuilt when someone looks).
    mutating func render<S: EventSink & ~Copyable>(_ c: ConversationIndex, scope: RenderScope, sink: inout S) {
        var first: Location = -1, second: Location = -1, extra = -1
        switch scope {
        case .location(let location): first = location
        case .locations(let a, let b): (first, second) = (a, b)
        case .member(let slot): extra = slot
        case .locationAndMember(let location, let slot): (first, extra) = (location, slot)
        case .forgotten: break
        }
        if let quiet = configuration.quietAbove {
            if conversations[c].memberCount > quiet {
                renderHushed(c, changed: (first, second), sink: &sink)
                return
            }
            if conversations[c].isHushed {
                renderEveryScreen(c, changed: (first, second), sink: &sink)
                return
            }
        }
        if conversations[c].threads.count == 0 && conversations[c].staleSlots.isEmpty {
            renderMain(c, changed: first == .main || second == .main, extra: extra, sink: &sink)
            return
        }
        var frames = RenderFrames(changed: (first, second))
        // The audiences of the changed locations, the extra member and the stale
        // ones, merged in join (slot) order. The main timeline's audience holds
        // the stale members; a thread's viewers are its audience.
        let atMain = first == .main || second == .main
        let audience = atMain ? conversations[c].mainAudience : SlotSet()
        let a = first > .main ? conversations[c].threads[first].viewers : SlotSet()
        let b = second > .main ? conversations[c].threads[second].viewers : SlotSet()
        let stale = atMain ? SlotSet() : conversations[c].staleSlots
        // The side panes at the changed threads (Protocol.md#side-panes).
        let sideA = first > .main ? conversations[c].threads[first].sideViewers : SlotSet()
        let sideB = second > .main ? conversations[c].threads[second].sideViewers : SlotSet()
        // The extra member, if any (no set: a join renders this way).
        var pendingExtra = extra >= 0 ? extra : Int.max
        var cursor = audience.next(from: 0) ?? Int.max
        var cursorA = a.next(from: 0) ?? Int.max, cursorB = b.next(from: 0) ?? Int.max
        var cursorStale = stale.next(from: 0) ?? Int.max
        var cursorSideA = sideA.next(from: 0) ?? Int.max, cursorSideB = sideB.next(from: 0) ?? Int.max
        while true {
            let next = min(
                min(min(pendingExtra, cursor), min(min(cursorA, cursorB), cursorStale)),
                min(cursorSideA, cursorSideB))
            if next == Int.max { break }
            var inAudience = false, sideInScope = false
            if cursor == next {
                cursor = audience.next(from: next + 1) ?? Int.max
                inAudience = true
            }
            if cursorA == next { cursorA = a.next(from: next + 1) ?? Int.max; inAudience = true }
            if cursorB == next { cursorB = b.next(from: next + 1) ?? Int.max; inAudience = true }
            if cursorStale == next { cursorStale = stale.next(from: next + 1) ?? Int.max; inAudience = true }
            if cursorSideA == next { cursorSideA = sideA.next(from: next + 1) ?? Int.max; sideInScope = true }
            if cursorSideB == next { cursorSideB = sideB.next(from: next + 1) ?? Int.max; sideInScope = true }
            if pendingExtra == next {
                pendingExtra = Int.max
                // The extra member's main screen counts only when in the audience;
                // their side pane, when they have one.
                if configuration.audience == .members || conversations[c].isOpen(next) { inAudience = true }
                sideInScope = true
            }
            // For each viewer, their main screen, then their side pane.
            if inAudience { visit(next, of: c, frames: &frames, sink: &sink) }
            if sideInScope { visitSide(next, of: c, frames: &frames, sink: &sink) }
        }
        if !conversations[c].staleSlots.isEmpty {
            conversations[c].clearStale()
            staleConversations -= 1
        }
        finish(&frames, of: c)
    }

    /// Renders conversation `c` after a command that named it (every applied `join`,
    /// `type`, `send`, `leave`, `remove`, `open` and `close` renders its conversation,
    /// also when it changed none of its typers: Protocol.md#who-sees-what). Every
    /// viewer but the stale ones is up to date after each step, so this visits only
    /// those, and costs one comparison when there are none anywhere.
    @inline(__always)
    mutating func renderForgotten<S: EventSink & ~Copyable>(_ c: ConversationIndex, sink: inout S) {
        if let quiet = configuration.quietAbove, conversations.contains(c),
            conversations[c].isHushed || conversations[c].memberCount > quiet
        {
            // Across --quiet-above either way (Protocol.md#quiet-large-rooms): a join
            // that takes the room past it sends every screen showing typers the empty
            // indicator, also when the joiner's own view is not in the audience
            // (--audience open); back at or below it, every screen is compared.
            render(c, scope: .forgotten, sink: &sink)
            return
        }
        guard staleConversations > 0, conversations.contains(c), !conversations[c].staleSlots.isEmpty else { return }
        render(c, scope: .forgotten, sink: &sink)
    }

    /// A render of a conversation above `--quiet-above` (Protocol.md#quiet-large-rooms):
    /// every screen shows the empty indicator. The first such render sends it to every
    /// screen that was last sent another, in join order (for each viewer, the main
    /// screen, then the side pane): O(members), once per crossing. After it every
    /// screen holds the empty one, new screens start from it, and renders visit
    /// nothing while the room stays above: a keystroke costs the same in a room of
    /// 100,000 as in one of 100. The typers still change: the changed locations'
    /// shared views are rebuilt when the room is back.
    mutating func renderHushed<S: EventSink & ~Copyable>(
        _ c: ConversationIndex, changed: (Location, Location),
        sink: inout S
    ) {
        if !conversations[c].isHushed {
            conversations[c].isHushed = true
            for slot in conversations[c].members.indices {
                var member = conversations[c].fields(of: slot)
                guard member.user != MemberSlot.vacant, member.receives else { continue }
                if configuration.audience == .members || conversations[c].isOpen(slot) {
                    let last = conversations[c].lastSent(of: slot)
                    if last !== IndicatorView.empty {
                        conversations[c].setLastSent(.empty, at: slot)
                        if last != .empty { emitIndicator(slot, member, of: c, view: .empty, sink: &sink) }
                    }
                }
                let side = conversations[c].members[slot].side
                if side > .main {
                    let last = conversations[c].sideLastSent(of: slot)
                    if last !== IndicatorView.empty {
                        conversations[c].setSideLastSent(.empty, at: slot)
                        member.location = side
                        member.isList = false
                        if last != .empty { emitIndicator(slot, member, of: c, view: .empty, pane: .side, sink: &sink) }
                    }
                }
            }
        }
        if !conversations[c].staleSlots.isEmpty {
            // They hold the empty indicator, which is what every screen shows.
            conversations[c].clearStale()
            staleConversations -= 1
        }
        settle(changed.0, of: c, seen: false)
        settle(changed.1, of: c, seen: false)
    }

    /// After a render that did not go through ``finish(_:of:)``: a changed `location`
    /// (-1: none) nobody was shown (`seen` false) keeps a stale shared view, rebuilt
    /// when someone looks; a changed thread left with nothing is released.
    @inline(__always)
    mutating func settle(_ location: Location, of c: ConversationIndex, seen: Bool) {
        guard location >= 0 else { return }
        if !seen && (location == .main || conversations[c].threads.contains(location)) {
            conversations[c][location: location].fullViewIsStale = true
        }
        if location > .main { conversations[c].threads.release(location) }
    }

    /// The first render of a conversation back at or below `--quiet-above`: every
    /// screen, at every location, is compared with what it was last sent (the empty
    /// indicator), in join order, each viewer's main screen then side pane.
    /// O(members + locations), once per crossing.
    mutating func renderEveryScreen<S: EventSink & ~Copyable>(
        _ c: ConversationIndex, changed: (Location, Location),
        sink: inout S
    ) {
        conversations[c].isHushed = false
        var frames: [Location: RenderFrame] = [:]
        func withFrame(_ location: Location, _ body: (inout Engine, inout RenderFrame) -> Void) {
            var frame =
                frames.removeValue(forKey: location)
                ?? makeFrame(location, of: c, changed: location == changed.0 || location == changed.1, index: -1)
            body(&self, &frame)
            frames[location] = frame
        }
        for slot in conversations[c].members.indices {
            var member = conversations[c].fields(of: slot)
            guard member.user != MemberSlot.vacant, member.receives else { continue }
            if configuration.audience == .members || conversations[c].isOpen(slot) {
                withFrame(member.location) { engine, frame in
                    engine.refresh(slot, member, of: c, frame: &frame, sink: &sink)
                }
            }
            let side = conversations[c].members[slot].side
            if side > .main {
                member.location = side
                member.isList = false
                withFrame(side) { engine, frame in
                    engine.refresh(slot, member, of: c, frame: &frame, pane: .side, sink: &sink)
                }
            }
        }
        for var frame in frames.values { finish(&frame, into: -1, of: c) }
        if !conversations[c].staleSlots.isEmpty {
            conversations[c].clearStale()
            staleConversations -= 1
        }
        settle(changed.0, of: c, seen: frames[changed.0] != nil)
        settle(changed.1, of: c, seen: frames[changed.1] != nil)
    }

    /// ``render(_:scope:sink:)`` of a conversation without threads or stale members
    /// (the common case): everyone is at the main timeline, so one frame serves all.
    /// `changed`: the typers there changed (the whole audience is visited); else
    /// only `extra` (-1: nobody) is.
    mutating func renderMain<S: EventSink & ~Copyable>(_ c: ConversationIndex, changed: Bool, extra: Int, sink: inout S)
    {
        guard changed else {
            guard extra >= 0 && (configuration.audience == .members || conversations[c].isOpen(extra)) else { return }
            let member = conversations[c].fields(of: extra)
            guard member.user != MemberSlot.vacant, member.receives else { return }
            if member.streak.isNone && Engine.variant(table: member.table, list: member.isList) == defaultVariant
                && !conversations[c].main.fullViewIsStale
            {
                // One viewer who sees the shared view as it is (a join): no frame.
                let full = conversations[c].main.fullView
                let last = conversations[c].lastSent(of: extra)
                if last === full { return }
                conversations[c].setLastSent(full, at: extra)
                if last == full { return }
                emitIndicator(extra, member, of: c, view: full, sink: &sink)
                return
            }
            var frame = makeFrame(.main, of: c, changed: false, index: 0)
            refresh(extra, member, of: c, frame: &frame, sink: &sink)
            finish(&frame, into: 0, of: c)
            return
        }
        // The main timeline's audience, in join order (members who receive nothing,
        // and under `--audience open` closed views, are not in it): a frame for
        // them, none when nobody looks (the shared view is rebuilt when someone does).
        let audience = conversations[c].mainAudience
        guard var slot = audience.next(from: 0) else {
            conversations[c].main.fullViewIsStale = true
            return
        }
        var frame = makeFrame(.main, of: c, changed: true, index: 0)
        while true {
            refresh(slot, conversations[c].fields(of: slot), of: c, frame: &frame, sink: &sink)
            guard let following = audience.next(from: slot + 1) else { break }
            slot = following
        }
        finish(&frame, into: 0, of: c)
    }

    /// Stores what the render built, and marks the changed locations nobody looked
    /// at: their shared view is rebuilt when someone does.
    mutating func finish(_ frames: inout RenderFrames, of c: ConversationIndex) {
        // Each frame by name: a subscript here would be a coroutine, allocated.
        if frames.count > 0 { finish(&frames.a, into: 0, of: c) }
        if frames.count > 1 { finish(&frames.b, into: 1, of: c) }
        if frames.count > 2 { finish(&frames.c, into: 2, of: c) }
        if frames.count > 3 { finish(&frames.d, into: 3, of: c) }
        if frames.changed.0 >= 0 && frames.index(of: frames.changed.0) == nil {
            conversations[c][location: frames.changed.0].fullViewIsStale = true
        }
        if frames.changed.1 >= 0 && frames.index(of: frames.changed.1) == nil {
            conversations[c][location: frames.changed.1].fullViewIsStale = true
        }
        if frames.changed.0 > .main { conversations[c].threads.release(frames.changed.0) }
        if frames.changed.1 > .main { conversations[c].threads.release(frames.changed.1) }
    }

    /// Where each key is in a sequence of distinct keys.
    static func keyIndex(_ keys: some Sequence<UInt32>) -> [UInt32: Int] {
        var index: [UInt32: Int] = [:]
        for (at, key) in keys.enumerated() { index[key] = at }
        return index
    }

    /// Stores the variants one frame built and gives its head buffer back.
    @inline(__always)
    mutating func finish(_ frame: inout RenderFrame, into index: Int, of c: ConversationIndex) {
        if frame.full.typerCount == 0 {
            // Quiet: every variant is the empty view, and the next typer rebuilds
            // them all. Keeping none bounds them by the languages read while
            // someone types.
            if conversations[c][location: frame.location].variants.count > 0 {
                conversations[c][location: frame.location].variants.removeAll()
            }
        } else if !frame.variants.isEmpty {
            let epoch = conversations[c][location: frame.location].epoch
            for variant in frame.variants {
                #if TYPINGD_INTERNAL_CHECKS
                variantEntriesRead += conversations[c][location: frame.location].variants.entriesReadPerLookup
                #endif
                conversations[c][location: frame.location].variants.store(
                    VariantView(key: variant.key, view: variant.view, epoch: epoch))
            }
        }
        if index >= 0 { swap(&renderHeads[index], &frame.head) }
    }

    /// The frame of `location`, prepared on first use: its typers changed in this
    /// render (its shared view is rebuilt), or not (the shared view is reused unless
    /// it was left stale).
    mutating func frame(_ location: Location, of c: ConversationIndex, in frames: inout RenderFrames) -> Int {
        if let index = frames.index(of: location) { return index }
        let index = frames.count
        let changed = frames.changed.0 == location || frames.changed.1 == location
        frames.append(makeFrame(location, of: c, changed: changed, index: index))
        return index
    }

    /// A new frame of `location`, the `index`th of its render (it borrows that head
    /// buffer): its shared view is rebuilt when its typers `changed` or it was left
    /// stale, else reused.
    @inline(never)
    mutating func makeFrame(_ location: Location, of c: ConversationIndex, changed: Bool, index: Int) -> RenderFrame {
        var head: [StreakIndex] = []
        // -1: a frame of its own (a render of every location), not a shared buffer.
        if index >= 0 { swap(&head, &renderHeads[index]) }
        let (previous, isStale) = conversations[c].fullView(at: location)
        var frame = RenderFrame(
            conv: c, location: location, head: head, full: previous, stale: nil,
            staleChanged: false, groups: nil)
        frame.hasHead = false
        if changed || isStale {
            ensureHead(&frame)
            let (full, changed) = fullView(
                of: c, at: location, head: frame.head, groups: frame.groups, previous: previous)
            frame.full = full
            frame.stale = full === previous ? nil : previous
            frame.staleChanged = changed
            conversations[c].updateLocation(location) { state in
                state.fullView = full
                state.fullViewIsStale = false
                state.epoch &+= 1
            }
        }
        return frame
    }

    /// Collects the first typers and the activity groups of `frame`'s location, if
    /// not yet done.
    @inline(__always)
    mutating func ensureHead(_ frame: inout RenderFrame) {
        guard !frame.hasHead else { return }
        collectHead(of: frame.conv, at: frame.location, into: &frame.head)
        frame.groups = groupInfo(of: frame.conv, at: frame.location)
        frame.hasHead = true
    }

    /// The first typers at `location` a render needs: those the shared view packs
    /// (--max-listed + 1), and at least four, for the names of typers' phrases.
    /// Each gets its place in ``StreakRecord/rank``. O(those + log typers).
    mutating func collectHead(of c: ConversationIndex, at location: Location, into head: inout [StreakIndex]) {
        let typers = conversations[c].typers(at: location)
        let total = typers.count(in: streaks)
        let limit = max(min(total, configuration.maxListed + 1), min(total, 4))
        typers.collect(first: limit, in: streaks, into: &head)
        for (rank, s) in head.enumerated() { streaks[s].rank = Int32(rank) }
    }

    /// The activity groups at `location`, in the order of their first typer; nil
    /// when everyone there types. Status typers never group
    /// (Protocol.md#status-in-ones-own-words): each is a group of one. O((groups +
    /// status typers) × log typers).
    func groupInfo(of c: ConversationIndex, at location: Location) -> [GroupInfo]? {
        guard let groups = conversations[c].groups(at: location) else { return nil }
        let typers = conversations[c].typers(at: location)
        var result: [GroupInfo] = []
        for activity in Activity.allCases {
            let tree = groups.trees[Int(activity.rawValue)]
            guard !tree.isEmpty else { continue }
            if activity == .status {
                var members: [StreakIndex] = []
                tree.collect(first: tree.count(in: streaks), in: streaks, into: &members)
                for s in members {
                    result.append(
                        GroupInfo(
                            activity: .status, count: 1, named: streaks[s].isNamed ? 1 : 0, firsts: [s],
                            firstRank: typers.rank(of: s, in: streaks), secondRank: Int.max))
                }
                continue
            }
            var firsts: [StreakIndex] = []
            tree.collect(first: 4, in: streaks, into: &firsts)
            let firstRank = typers.rank(of: firsts[0], in: streaks)
            let secondRank = firsts.count > 1 ? typers.rank(of: firsts[1], in: streaks) : Int.max
            result.append(
                GroupInfo(
                    activity: activity, count: tree.count(in: streaks), named: tree.namedCount,
                    firsts: firsts, firstRank: firstRank, secondRank: secondRank))
        }
        result.sort { $0.firstRank < $1.firstRank }
        return result
    }

    /// The place of typer `s` among the typers of the current render's `head`, or
    /// `Int.max` when it comes after all of them.
    func rank(of s: StreakIndex, in head: [StreakIndex]) -> Int {
        let rank = Int(streaks[s].rank)
        return rank < head.count && head[rank] == s ? rank : Int.max
    }

    /// Brings one member's indicator up to date, with the frame of their location
    /// (prepared on first use).
    @inline(__always)
    mutating func visit<S: EventSink & ~Copyable>(
        _ slot: Int, of c: ConversationIndex, frames: inout RenderFrames, sink: inout S
    ) {
        let member = conversations[c].fields(of: slot)
        guard member.user != MemberSlot.vacant, member.receives else { return }
        // Stored properties, not a subscript: no accessor call per viewer.
        if frames.count > 0 && frames.a.location == member.location {
            refresh(slot, member, of: c, frame: &frames.a, sink: &sink)
            return
        }
        switch frame(member.location, of: c, in: &frames) {
        case 0: refresh(slot, member, of: c, frame: &frames.a, sink: &sink)
        case 1: refresh(slot, member, of: c, frame: &frames.b, sink: &sink)
        case 2: refresh(slot, member, of: c, frame: &frames.c, sink: &sink)
        default: refresh(slot, member, of: c, frame: &frames.d, sink: &sink)
        }
    }

    /// Brings the side pane of one member up to date, if they have one and receive
    /// typing (Protocol.md#side-panes): the frame of the thread it shows, the
    /// `--style` phrasing (a side pane is never a list row).
    mutating func visitSide<S: EventSink & ~Copyable>(
        _ slot: Int, of c: ConversationIndex, frames: inout RenderFrames,
        sink: inout S
    ) {
        var member = conversations[c].fields(of: slot)
        let side = conversations[c].members[slot].side
        guard member.user != MemberSlot.vacant, member.receives, side > .main else { return }
        member.location = side
        member.isList = false
        switch frame(side, of: c, in: &frames) {
        case 0: refresh(slot, member, of: c, frame: &frames.a, pane: .side, sink: &sink)
        case 1: refresh(slot, member, of: c, frame: &frames.b, pane: .side, sink: &sink)
        case 2: refresh(slot, member, of: c, frame: &frames.c, pane: .side, sink: &sink)
        default: refresh(slot, member, of: c, frame: &frames.d, pane: .side, sink: &sink)
        }
    }

    /// Brings one member's indicator up to date: `member` holds their slot's plain
    /// fields, `frame` is their location's.
    /// (Out of line: it is called from several loops, and the hot loop fits the
    /// instruction cache better with one copy of it.)
    @inline(never)
    mutating func refresh<S: EventSink & ~Copyable>(
        _ slot: Int, _ member: MemberSlot.Fields, of c: ConversationIndex,
        frame: inout RenderFrame, pane: Command.Pane = .main,
        sink: inout S
    ) {
        #if TYPINGD_INTERNAL_CHECKS
        viewersCompared += 1
        #endif
        let last = pane == .main ? conversations[c].lastSent(of: slot) : conversations[c].sideLastSent(of: slot)
        let key = Engine.variant(table: member.table, list: member.isList)
        let current: IndicatorView
        let streak = member.streak
        if !streak.isNone && streaks[streak].location == member.location {
            ensureHead(&frame)
            current = typerView(streak, rank: rank(of: streak, in: frame.head), frame: frame, variant: key, last: last)
            if current === last { return }
        } else if key == defaultVariant {
            current = frame.full
            if last === current { return }
            if !(last === frame.stale && frame.staleChanged) && last == current {
                setLastSent(current, at: slot, of: c, pane: pane)
                return
            }
        } else {
            let index = variantView(key, of: c, frame: &frame)
            current = frame.variants[index].view
            if last === current { return }
            if !(last === frame.variants[index].stale && frame.variants[index].changed) && last == current {
                setLastSent(current, at: slot, of: c, pane: pane)
                return
            }
        }
        setLastSent(current, at: slot, of: c, pane: pane)
        emitIndicator(slot, member, of: c, view: current, pane: pane, sink: &sink)
    }

    /// Records the indicator last sent to `pane` of member `slot` of `c`.
    @inline(__always)
    mutating func setLastSent(_ view: IndicatorView, at slot: Int, of c: ConversationIndex, pane: Command.Pane) {
        if pane == .main {
            conversations[c].setLastSent(view, at: slot)
        } else {
            conversations[c].setSideLastSent(view, at: slot)
        }
    }

    /// Writes the `indicator` event that shows `view` to the member in `slot`.
    @inline(__always)
    mutating func emitIndicator<S: EventSink & ~Copyable>(
        _ slot: Int, _ member: MemberSlot.Fields, of c: ConversationIndex,
        view: IndicatorView, pane: Command.Pane = .main, sink: inout S
    ) {
        let viewer = member.fingerprint.isComplete ? Identifier(member.fingerprint) : users[member.user].id
        let thread = member.location == .main ? nil : conversations[c].threads[member.location].id
        emit(
            .indicator(
                Event.Indicator(
                    at: now, conv: conversations[c].id, thread: thread, viewer: viewer,
                    screen: member.isList ? .list : .chat, pane: pane, view: view)),
            to: &sink)
        if let after = configuration.announceAfter {
            scheduleAnnouncement(of: c, member.user, pane, view, after: after)
        }
    }

    /// An indicator was written to a screen: one with text is announced `after` ms
    /// from now unless another comes first; the empty one cancels it, and the screen
    /// has announced nothing (Protocol.md#announcements-for-screen-readers).
    @inline(never)
    mutating func scheduleAnnouncement(
        of c: ConversationIndex, _ u: UserIndex, _ pane: Command.Pane, _ view: IndicatorView,
        after: Int
    ) {
        let screen = ScreenKey(conv: c, user: u, side: pane == .side)
        if view.withTextBytes({ $0.isEmpty }) {
            announcements.clear(screen)
        } else {
            let (due, overflow) = now.addingReportingOverflow(after)
            announcements.schedule(screen, at: overflow ? Engine.maxTime : min(due, Engine.maxTime))
        }
    }

    /// The screen `pane` of member `u` in `c` was forgotten (or is gone): it loses its
    /// pending announcement and what it last announced.
    @inline(__always)
    mutating func forgetAnnouncements(of c: ConversationIndex, _ u: UserIndex, _ pane: Command.Pane) {
        guard configuration.announceAfter != nil else { return }
        announcements.forget(ScreenKey(conv: c, user: u, side: pane == .side))
    }

    /// The index in `frame.variants` of the shared view of `frame` in variant `key`,
    /// built once per render: the same entries, its own phrase. Keeps the
    /// location's previous one when its content is the same, so that its holders
    /// need nothing.
    mutating func variantView(_ key: UInt32, of c: ConversationIndex, frame: inout RenderFrame) -> Int {
        if let index = frame.variantIndex {
            if let found = index[key] { return found }
        } else {
            for index in frame.variants.indices where frame.variants[index].key == key { return index }
        }
        let state = conversations[c][location: frame.location]
        let previous = state.variants.find(key)
        #if TYPINGD_INTERNAL_CHECKS
        variantEntriesRead += state.variants.entriesReadPerLookup
        #endif
        defer {
            if frame.variantIndex != nil {
                frame.variantIndex?[key] = frame.variants.count - 1
            } else if frame.variants.count > VariantViews.linearLimit {
                frame.variantIndex = Engine.keyIndex(frame.variants.lazy.map(\.key))
            }
        }
        if let previous, previous.epoch == state.epoch {
            // Built since the typers last changed.
            frame.variants.append((key, previous.view, nil, false))
            return frame.variants.count - 1
        }
        var text: [UInt8] = []
        text.reserveCapacity(64)
        ensureHead(&frame)
        appendPhrase(frame: frame, excluding: .none, rank: .max, variant: key, into: &text)
        let full = frame.full
        let view: IndicatorView
        if full.typerCount == 0 {
            view = .empty
        } else {
            view = IndicatorView(base: full, omitting: -1, listed: full.listed, more: full.more, text: text)
        }
        if let old = previous?.view, old == view {
            frame.variants.append((key, old, nil, false))
        } else {
            frame.variants.append((key, view, previous?.view, true))
        }
        return frame.variants.count - 1
    }

    /// The shared view of `location` of `c`: the first min(typers, max-listed)
    /// typers listed, the rest counted, their activities, and the phrase (default
    /// table, `--style`) for all of them; it packs one entry more, for the typers'
    /// derived views. Returns `previous` itself when it packs exactly that, and
    /// whether the content (ids listed, `more`, activities, text) differs from
    /// `previous`'s.
    func fullView(
        of c: ConversationIndex, at location: Location, head: [StreakIndex], groups: [GroupInfo]?,
        previous: IndicatorView
    ) -> (IndicatorView, changed: Bool) {
        let total = conversations[c].typers(at: location).count(in: streaks)
        if total == 0 { return (.empty, previous != .empty) }
        let listed = min(total, configuration.maxListed)
        let packedCount = min(total, configuration.maxListed + 1)
        var packed: [UInt8] = []
        packed.reserveCapacity(24 * packedCount + 96)
        var starts: [Int32] = []
        starts.reserveCapacity(packedCount + 1)
        var activities: [UInt8] = []
        for index in 0..<packedCount {
            starts.append(Int32(packed.count))
            IndicatorView.pack(users[streaks[head[index]].user].id, into: &packed)
        }
        if groups != nil {
            // Only where someone does something else than type: else no storage.
            // A loop, not a closure: one capturing `self` would copy the engine.
            var others = false
            activities.reserveCapacity(packedCount)
            for index in 0..<packedCount {
                let activity = streaks[head[index]].activity
                activities.append(activity.rawValue)
                if activity != .typing { others = true }
            }
            if !others { activities = [] }
        }
        let textStart = packed.count
        starts.append(Int32(textStart))
        let frame = RenderFrame(
            conv: c, location: location, head: head, full: .empty, stale: nil,
            staleChanged: false, groups: groups)
        appendPhrase(frame: frame, excluding: .none, rank: .max, variant: defaultVariant, into: &packed)
        if previous.base == nil && previous.textStart == textStart && previous.listed == listed
            && previous.more == total - listed && previous.storage == packed && previous.entryActivities == activities
        {
            return (previous, false)
        }
        let view = IndicatorView(
            packed: packed, entryStarts: starts, listed: listed, more: total - listed,
            textStart: textStart, activities: activities)
        // Both list every entry they pack (the common case, no --max-listed cut):
        // different bytes are different content. Else compare what is listed.
        let uncut =
            previous.base == nil && previous.packedCount == previous.listed && packedCount == listed
            && previous.entryActivities == activities
        return (view, uncut || view != previous)
    }

    /// Appends the phrase for the typers of `frame`'s location, leaving out streak
    /// `excluded` (`none`: nobody), at `rank` in the frame's head (`Int.max`: beyond it), in
    /// variant `key` (its table and style): one clause per activity, and one per
    /// status typer, with their words (Protocol.md#status-in-ones-own-words), in the
    /// order of each clause's first typer (Protocol.md#activities-recording-sending-sharing),
    /// joined by the table's separator and ended by its end; nothing when nobody is
    /// left. (The table is read in place, not copied, and the names a clause shows are
    /// looked up before it is built: no closure, which would capture the engine.)
    func appendPhrase(
        frame: borrowing RenderFrame, excluding excluded: StreakIndex, rank: Int, variant key: UInt32,
        into bytes: inout [UInt8]
    ) {
        let style = key & 1 == 1 ? configuration.listStyle : configuration.style
        let table = Int(key >> 1)
        guard let groups = frame.groups else {
            // Everyone types: one clause, named from the head.
            let typers = conversations[frame.conv].typers(at: frame.location)
            let count = typers.count(in: streaks) - (!excluded.isNone ? 1 : 0)
            guard count > 0 else { return }
            let named = typers.namedCount - (!excluded.isNone && streaks[excluded].isNamed ? 1 : 0)
            let several = isSeveral(count)
            let shown = several ? 0 : Engine.shownNames(count: count, named: named, style: style)
            var names = PhraseTable.Names()
            for position in 0..<shown {
                names[position] = users[streaks[frame.head[position < rank ? position : position + 1]].user].displayName
            }
            configuration.phrases[table].appendClause(
                count: count, shown: shown, activity: .typing, names: names,
                several: several, into: &bytes)
            configuration.phrases[table].appendEnd(into: &bytes)
            return
        }
        // The groups in the order of their first typer, the excluded typer's
        // group without them.
        var order: [(rank: Int, group: Int)] = []
        order.reserveCapacity(groups.count)
        for (index, group) in groups.enumerated() {
            if holds(group, excluded) {
                guard group.count > 1 else { continue }
                order.append((group.firsts[0] == excluded ? group.secondRank : group.firstRank, index))
            } else {
                order.append((group.firstRank, index))
            }
        }
        order.sort { $0.rank < $1.rank }
        for (position, entry) in order.enumerated() {
            if position > 0 { configuration.phrases[table].appendSeparator(into: &bytes) }
            let group = groups[entry.group]
            var firsts = group.firsts
            var count = group.count, named = group.named
            if holds(group, excluded) {
                count -= 1
                if streaks[excluded].isNamed { named -= 1 }
                firsts.removeAll { $0 == excluded }
            }
            let several = isSeveral(count)
            let shown = several ? 0 : Engine.shownNames(count: count, named: named, style: style)
            var names = PhraseTable.Names()
            for index in 0..<shown { names[index] = users[streaks[firsts[index]].user].displayName }
            if group.activity == .status {
                configuration.phrases[table].appendStatusClause(
                    shown: shown, names: names,
                    words: statusWords[firsts[0]] ?? "", into: &bytes)
            } else {
                configuration.phrases[table].appendClause(
                    count: count, shown: shown, activity: group.activity,
                    names: names, several: several, into: &bytes)
            }
        }
        if !order.isEmpty { configuration.phrases[table].appendEnd(into: &bytes) }
    }

    /// True when `group` holds streak `s` (`none`: nobody): a status typer's group
    /// holds only them.
    @inline(__always)
    func holds(_ group: GroupInfo, _ s: StreakIndex) -> Bool {
        guard !s.isNone else { return false }
        return group.activity == .status ? group.firsts[0] == s : streaks[s].activity == group.activity
    }

    /// Whether a clause of `count` typers is phrased with its table's `several`
    /// subject: more than `--several-after` (Protocol.md#several-people).
    @inline(__always)
    func isSeveral(_ count: Int) -> Bool {
        guard let limit = configuration.severalAfter else { return false }
        return count > limit
    }

    /// How many names a clause of `count` typers, `named` of them named, shows
    /// (Protocol.md#phrases): group: all when three or fewer, else two; compact: all
    /// when two or fewer, else one; never more than are named.
    @inline(__always)
    package static func shownNames(count: Int, named: Int, style: EngineConfiguration.Style) -> Int {
        let slots: Int
        switch style {
        case .group: slots = count <= 3 ? count : 2
        case .compact: slots = count <= 2 ? count : 1
        }
        return min(slots, named)
    }

    /// The view of typer `s`, at `rank` in the frame's head (`Int.max`: beyond it),
    /// at its location (whose frame is `frame`) in variant `key`: the shared view without them, and the phrase for the others. Returns
    /// `last` when that is what it already shows (compared without building a
    /// view); otherwise a view derived from the shared one.
    ///
    /// `last` may be derived from an older shared view, or be one (the view a typer
    /// saw before they started): it is kept while its content is right, so no view
    /// is built for a typer whose view did not change. Such a typer keeps at most
    /// one old view alive, of at most `--max-listed` + 1 ids.
    func typerView(_ s: StreakIndex, rank: Int, frame: borrowing RenderFrame, variant key: UInt32, last: IndicatorView)
        -> IndicatorView
    {
        let full = frame.full
        let others = full.typerCount - 1
        if others <= 0 { return last === IndicatorView.empty || last == .empty ? last : .empty }
        let listed = min(others, configuration.maxListed)
        let more = others - listed
        let omitted = rank < full.packedCount ? rank : -1
        var text: [UInt8] = []
        text.reserveCapacity(64)
        appendPhrase(frame: frame, excluding: s, rank: rank, variant: key, into: &text)
        if last.listed == listed && last.more == more && text.withUnsafeBytes({ last.hasText($0) }) {
            if let base = last.base, base === full, last.omitted == omitted { return last }
            let same = IndicatorView.withSegments(of: full, omitting: omitted, listed: listed) { a1, a2 in
                last.withIDSegments { b1, b2 in IndicatorView.equal(a1, a2, b1, b2) }
            }
            if same && last.sameActivities(asEntriesOf: full, omitting: omitted) { return last }
        }
        return IndicatorView(base: full, omitting: omitted, listed: listed, more: more, text: text)
    }
}

/// The frames of one render: at most three locations (the two whose typers
/// changed, and one where an extra or stale member is), kept without allocating.
/// A frame not yet made is a frame of location -1 that holds nothing to release.
struct RenderFrames {
    /// The locations whose typers changed (-1: none).
    let changed: (Location, Location)
    /// The frames, in the order they were made; read as stored properties in the
    /// render's loop (a subscript is an accessor call, per viewer).
    var a = RenderFrame.unused()
    var b = RenderFrame.unused()
    var c = RenderFrame.unused()
    /// A render visits at most four locations: two whose typers changed, the main
    /// timeline (stale members), and one member's main screen and side pane.
    var d = RenderFrame.unused()
    private(set) var count = 0

    init(changed: (Location, Location)) {
        self.changed = changed
    }

    @inline(__always)
    func index(of location: Location) -> Int? {
        if count > 0 && a.location == location { return 0 }
        if count > 1 && b.location == location { return 1 }
        if count > 2 && c.location == location { return 2 }
        if count > 3 && d.location == location { return 3 }
        return nil
    }

    @inline(__always)
    mutating func append(_ frame: consuming RenderFrame) {
        switch count {
        case 0: a = frame
        case 1: b = frame
        case 2: c = frame
        default: d = frame
        }
        count += 1
    }
}
