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
}

/// What a render knows about one location: its first typers, its shared view and
/// the one it replaced, and, where typers do different things, their groups.
struct RenderFrame {
    var conv: Int32
    var location: Location
    /// The first typers (the shared view's packed entries, and at least four).
    var head: [Int32]
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
}

/// One activity's typers at a location, as a phrase needs them.
struct GroupInfo {
    var activity: Activity
    /// Typers doing it, and how many of them are named.
    var count: Int
    var named: Int
    /// Its first typers (up to four), in order: the names a clause shows come from
    /// these.
    var firsts: [Int32]
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
    var defaultVariant: UInt32 { Engine.variant(table: UInt16(configuration.phrases.defaultTable), list: false) }

    /// Writes an `indicator` event for each viewer in `scope`, and each stale
    /// member, whose view differs from what they were last sent, in join order.
    ///
    /// Every viewer at a location who is not typing there sees the same view, in
    /// their table and style: the location's shared view (built once per render, in
    /// O(min(typers, max-listed))), or a variant of it with its own phrase, built once
    /// per (table, style) the render meets. A member who holds the previous one is
    /// known to need the new one when its content changed. Typers (who see everyone
    /// but themselves) get views derived from it. The work is the first typers
    /// (O(listed + log typers)) plus the viewers in scope: at a thread, its viewers;
    /// at the main timeline, the members (or open views) of the conversation; and a
    /// location nobody in scope looks at is not built at all (the shared view is
    /// rebuilt when someone looks).
    mutating func render<S: EventSink & ~Copyable>(_ c: Int32, scope: RenderScope, sink: inout S) {
        var first: Location = -1, second: Location = -1, extra = -1
        switch scope {
        case .location(let location): first = location
        case .locations(let a, let b): (first, second) = (a, b)
        case .member(let slot): extra = slot
        case .locationAndMember(let location, let slot): (first, extra) = (location, slot)
        }
        var frames = RenderFrames(changed: (first, second))
        if first == .main || second == .main {
            // The whole audience, in join order: the common case, kept tight. (No
            // copy of the member list is held: the render writes to it.)
            let everyoneHere = conversations[c].threads.count == 0 && conversations[c].staleSlots.isEmpty && extra < 0
            switch configuration.audience {
            case .members:
                for slot in 0..<conversations[c].members.count {
                    if everyoneHere || inScope(slot, of: c, first, second, extra) {
                        refresh(slot, of: c, frames: &frames, sink: &sink)
                    }
                }
            case .open:
                for slot in conversations[c].openSlots where everyoneHere || inScope(Int(slot), of: c, first, second, extra) {
                    refresh(Int(slot), of: c, frames: &frames, sink: &sink)
                }
            }
        } else {
            // Threads' viewers, the extra member and the stale ones, merged in join order.
            let a = first > .main ? conversations[c].threads[first].viewers : []
            let b = second > .main ? conversations[c].threads[second].viewers : []
            let extras = extra >= 0 ? [Int32(extra)] : []
            var ia = 0, ib = 0, ie = 0, istale = 0
            let stale = conversations[c].staleSlots
            while true {
                var next = Int32.max
                if ia < a.count { next = min(next, a[ia]) }
                if ib < b.count { next = min(next, b[ib]) }
                if ie < extras.count { next = min(next, extras[ie]) }
                if istale < stale.count { next = min(next, stale[istale]) }
                if next == Int32.max { break }
                var inAudience = false
                if ia < a.count && a[ia] == next { ia += 1; inAudience = true }
                if ib < b.count && b[ib] == next { ib += 1; inAudience = true }
                if istale < stale.count && stale[istale] == next { istale += 1; inAudience = true }
                if ie < extras.count && extras[ie] == next {
                    ie += 1
                    // The extra member counts only when in the audience.
                    if configuration.audience == .members || conversations[c].isOpen(Int(next)) { inAudience = true }
                }
                if inAudience { refresh(Int(next), of: c, frames: &frames, sink: &sink) }
            }
        }
        conversations[c].clearStale()
        finish(&frames, of: c)
    }

    /// True when member `slot` is visited by a render of `first` and `second`
    /// with `extra`: at one of those locations, the extra member, or stale.
    @inline(__always)
    func inScope(_ slot: Int, of c: Int32, _ first: Location, _ second: Location, _ extra: Int) -> Bool {
        let location = conversations[c].members[slot].location
        return location == first || location == second || slot == extra || conversations[c].isStale(slot)
    }

    /// Stores what the render built, and marks the changed locations nobody looked
    /// at: their shared view is rebuilt when someone does.
    mutating func finish(_ frames: inout RenderFrames, of c: Int32) {
        for index in 0..<frames.count {
            let frame = frames[index]
            if !frame.variants.isEmpty {
                let epoch = conversations[c][location: frame.location].epoch
                for variant in frame.variants {
                    let entry = VariantView(key: variant.key, view: variant.view, epoch: epoch)
                    if let at = conversations[c][location: frame.location].variants.firstIndex(where: { $0.key == variant.key }) {
                        conversations[c][location: frame.location].variants[at] = entry
                    } else {
                        conversations[c][location: frame.location].variants.append(entry)
                    }
                }
            }
            swap(&renderHeads[index], &frames[index].head)
        }
        for location in [frames.changed.0, frames.changed.1] where location >= 0 && frames.index(of: location) == nil {
            conversations[c][location: location].fullViewIsStale = true
        }
        for location in [frames.changed.0, frames.changed.1] where location > .main {
            conversations[c].threads.release(location)
        }
    }

    /// The frame of `location`, prepared on first use: its typers changed in this
    /// render (its shared view is rebuilt), or not (the shared view is reused unless
    /// it was left stale).
    mutating func frame(_ location: Location, of c: Int32, in frames: inout RenderFrames) -> Int {
        if let index = frames.index(of: location) { return index }
        let index = frames.count
        var head: [Int32] = []
        swap(&head, &renderHeads[index])
        collectHead(of: c, at: location, into: &head)
        let groups = groupInfo(of: c, at: location)
        let state = conversations[c][location: location]
        var frame = RenderFrame(conv: c, location: location, head: head, full: state.fullView, stale: nil,
                                staleChanged: false, groups: groups)
        if frames.changed.0 == location || frames.changed.1 == location || state.fullViewIsStale {
            let previous = state.fullView
            let (full, changed) = fullView(of: c, at: location, head: frame.head, groups: groups, previous: previous)
            frame.full = full
            frame.stale = full === previous ? nil : previous
            frame.staleChanged = changed
            conversations[c][location: location].fullView = full
            conversations[c][location: location].fullViewIsStale = false
            conversations[c][location: location].epoch &+= 1
        }
        frames.append(frame)
        return index
    }

    /// The first typers at `location` a render needs: those the shared view packs
    /// (--max-listed + 1), and at least four, for the names of typers' phrases.
    /// Each gets its place in ``StreakRecord/rank``. O(those + log typers).
    mutating func collectHead(of c: Int32, at location: Location, into head: inout [Int32]) {
        let typers = conversations[c][location: location].typers
        let total = typers.count(in: streaks)
        let limit = max(min(total, configuration.maxListed + 1), min(total, 4))
        typers.collect(first: limit, in: streaks, into: &head)
        for (rank, s) in head.enumerated() { streaks[s].rank = Int32(rank) }
    }

    /// The activity groups at `location`, in the order of their first typer; nil
    /// when everyone there types. O(groups × log typers).
    func groupInfo(of c: Int32, at location: Location) -> [GroupInfo]? {
        let state = conversations[c][location: location]
        guard let groups = state.groups else { return nil }
        var result: [GroupInfo] = []
        for activity in Activity.allCases {
            let tree = groups.trees[Int(activity.rawValue)]
            guard !tree.isEmpty else { continue }
            var firsts: [Int32] = []
            tree.collect(first: 4, in: streaks, into: &firsts)
            let firstRank = state.typers.rank(of: firsts[0], in: streaks)
            let secondRank = firsts.count > 1 ? state.typers.rank(of: firsts[1], in: streaks) : Int.max
            result.append(GroupInfo(activity: activity, count: tree.count(in: streaks), named: tree.namedCount,
                                    firsts: firsts, firstRank: firstRank, secondRank: secondRank))
        }
        result.sort { $0.firstRank < $1.firstRank }
        return result
    }

    /// The place of typer `s` among the typers of the current render's `head`, or
    /// `Int.max` when it comes after all of them.
    func rank(of s: Int32, in head: [Int32]) -> Int {
        let rank = Int(streaks[s].rank)
        return rank < head.count && head[rank] == s ? rank : Int.max
    }

    /// Brings one member's indicator up to date.
    mutating func refresh<S: EventSink & ~Copyable>(_ slot: Int, of c: Int32, frames: inout RenderFrames, sink: inout S) {
        let member = conversations[c].members[slot]
        guard member.isOccupied, member.receives else { return }
        #if TYPINGD_INTERNAL_CHECKS
        viewersCompared += 1
        #endif
        let index = frame(member.location, of: c, in: &frames)
        let last = member.lastSent
        let key = Engine.variant(table: member.table, list: member.isList)
        let current: IndicatorView
        if member.streak >= 0 && streaks[member.streak].location == member.location {
            current = typerView(member.streak, rank: rank(of: member.streak, in: frames[index].head),
                                frame: frames[index], variant: key, last: last)
            if current === last { return }
        } else {
            let (full, stale, staleChanged) = key == defaultVariant
                ? (frames[index].full, frames[index].stale, frames[index].staleChanged)
                : variantView(key, of: c, frame: &frames[index])
            current = full
            if last === full { return }
            if !(last === stale && staleChanged) && last == full {
                conversations[c].setLastSent(full, at: slot)
                return
            }
        }
        conversations[c].setLastSent(current, at: slot)
        let viewer = member.fingerprint.isComplete ? Identifier(member.fingerprint) : users[member.user].id
        let thread = member.location == .main ? nil : conversations[c].threads[member.location].id
        emit(.indicator(Event.Indicator(at: now, conv: conversations[c].id, thread: thread, viewer: viewer,
                                        screen: member.isList ? .list : .chat, view: current)),
             to: &sink)
    }

    /// The table and style of variant `key`.
    @inline(__always)
    func phrasing(_ key: UInt32) -> (table: PhraseTable, style: EngineConfiguration.Style) {
        (configuration.phrases[Int(key >> 1)], key & 1 == 1 ? configuration.listStyle : configuration.style)
    }

    /// The shared view of `frame` in variant `key`, built once per render: the
    /// same entries, its own phrase. Keeps the location's previous one when its
    /// content is the same, so that its holders need nothing.
    mutating func variantView(_ key: UInt32, of c: Int32,
                              frame: inout RenderFrame) -> (IndicatorView, IndicatorView?, Bool) {
        if let built = frame.variants.first(where: { $0.key == key }) { return (built.view, built.stale, built.changed) }
        let state = conversations[c][location: frame.location]
        let previous = state.variants.first { $0.key == key }
        if let previous, previous.epoch == state.epoch {
            // Built since the typers last changed.
            frame.variants.append((key, previous.view, nil, false))
            return (previous.view, nil, false)
        }
        let (table, style) = phrasing(key)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        appendPhrase(frame: frame, excluding: -1, rank: .max, table: table, style: style, into: &text)
        let full = frame.full
        let view: IndicatorView
        if full.typerCount == 0 {
            view = .empty
        } else {
            view = IndicatorView(base: full, omitting: -1, listed: full.listed, more: full.more, text: text)
        }
        if let old = previous?.view, old == view {
            frame.variants.append((key, old, nil, false))
            return (old, nil, false)
        }
        frame.variants.append((key, view, previous?.view, true))
        return (view, previous?.view, true)
    }

    /// The shared view of `location` of `c`: the first min(typers, max-listed)
    /// typers listed, the rest counted, their activities, and the phrase (default
    /// table, `--style`) for all of them; it packs one entry more, for the typers'
    /// derived views. Returns `previous` itself when it packs exactly that, and
    /// whether the content (ids listed, `more`, activities, text) differs from
    /// `previous`'s.
    func fullView(of c: Int32, at location: Location, head: [Int32], groups: [GroupInfo]?,
                  previous: IndicatorView) -> (IndicatorView, changed: Bool) {
        let total = conversations[c][location: location].typers.count(in: streaks)
        if total == 0 { return (.empty, previous != .empty) }
        let listed = min(total, configuration.maxListed)
        let packedCount = min(total, configuration.maxListed + 1)
        var packed: [UInt8] = []
        packed.reserveCapacity(24 * packedCount + 48)
        var starts: [Int32] = []
        starts.reserveCapacity(packedCount + 1)
        var activities: [UInt8] = []
        for index in 0..<packedCount {
            starts.append(Int32(packed.count))
            IndicatorView.pack(users[streaks[head[index]].user].id, into: &packed)
        }
        if groups != nil {
            // Only where someone does something else than type: else no storage.
            activities = head.prefix(packedCount).map { streaks[$0].activity.rawValue }
            if !activities.contains(where: { $0 != Activity.typing.rawValue }) { activities = [] }
        }
        let textStart = packed.count
        starts.append(Int32(textStart))
        let frame = RenderFrame(conv: c, location: location, head: head, full: .empty, stale: nil,
                                staleChanged: false, groups: groups)
        let (table, style) = phrasing(defaultVariant)
        appendPhrase(frame: frame, excluding: -1, rank: .max, table: table, style: style, into: &packed)
        if previous.base == nil && previous.textStart == textStart && previous.listed == listed
            && previous.more == total - listed && previous.storage == packed && previous.entryActivities == activities {
            return (previous, false)
        }
        let view = IndicatorView(packed: packed, entryStarts: starts, listed: listed, more: total - listed,
                                 textStart: textStart, activities: activities)
        // Both list every entry they pack (the common case, no --max-listed cut):
        // different bytes are different content. Else compare what is listed.
        let uncut = previous.base == nil && previous.packedCount == previous.listed && packedCount == listed
            && previous.entryActivities == activities
        return (view, uncut || view != previous)
    }

    /// Appends the phrase for the typers of `frame`'s location, leaving out streak
    /// `excluded` (-1: none), at `rank` in the frame's head (`Int.max`: beyond it),
    /// in `table` and `style`: one clause per activity, in the order of each
    /// activity's first typer (v3 §A), joined by the table's separator and ended by
    /// its end; nothing when nobody is left.
    func appendPhrase(frame: RenderFrame, excluding excluded: Int32, rank: Int, table: PhraseTable,
                      style: EngineConfiguration.Style, into bytes: inout [UInt8]) {
        guard let groups = frame.groups else {
            // Everyone types: one clause, named from the head.
            let typers = conversations[frame.conv][location: frame.location].typers
            let count = typers.count(in: streaks) - (excluded >= 0 ? 1 : 0)
            guard count > 0 else { return }
            let named = typers.namedCount - (excluded >= 0 && streaks[excluded].isNamed ? 1 : 0)
            let shown = Engine.shownNames(count: count, named: named, style: style)
            let head = frame.head
            table.appendClause(count: count, shown: shown, activity: .typing, into: &bytes) { position in
                users[streaks[head[position < rank ? position : position + 1]].user].displayName
            }
            table.appendEnd(into: &bytes)
            return
        }
        // The groups in the order of their first typer, the excluded typer's
        // group without them.
        var order: [(rank: Int, group: Int)] = []
        order.reserveCapacity(groups.count)
        for (index, group) in groups.enumerated() {
            if excluded >= 0 && streaks[excluded].activity == group.activity {
                guard group.count > 1 else { continue }
                order.append((group.firsts[0] == excluded ? group.secondRank : group.firstRank, index))
            } else {
                order.append((group.firstRank, index))
            }
        }
        order.sort { $0.rank < $1.rank }
        for (position, entry) in order.enumerated() {
            if position > 0 { table.appendSeparator(into: &bytes) }
            let group = groups[entry.group]
            var firsts = group.firsts
            var count = group.count, named = group.named
            if excluded >= 0 && streaks[excluded].activity == group.activity {
                count -= 1
                if streaks[excluded].isNamed { named -= 1 }
                firsts.removeAll { $0 == excluded }
            }
            let shown = Engine.shownNames(count: count, named: named, style: style)
            table.appendClause(count: count, shown: shown, activity: group.activity, into: &bytes) { position in
                users[streaks[firsts[position]].user].displayName
            }
        }
        if !order.isEmpty { table.appendEnd(into: &bytes) }
    }

    /// How many names a clause of `count` typers, `named` of them named, shows
    /// (v2 §C): group: all when three or fewer, else two; compact: all when two or
    /// fewer, else one; never more than are named.
    @inline(__always)
    static func shownNames(count: Int, named: Int, style: EngineConfiguration.Style) -> Int {
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
    func typerView(_ s: Int32, rank: Int, frame: RenderFrame, variant key: UInt32, last: IndicatorView) -> IndicatorView {
        let full = frame.full
        let others = full.typerCount - 1
        if others <= 0 { return last === IndicatorView.empty || last == .empty ? last : .empty }
        let listed = min(others, configuration.maxListed)
        let more = others - listed
        let omitted = rank < full.packedCount ? rank : -1
        var text: [UInt8] = []
        text.reserveCapacity(64)
        let (table, style) = phrasing(key)
        appendPhrase(frame: frame, excluding: s, rank: rank, table: table, style: style, into: &text)
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
struct RenderFrames {
    /// The locations whose typers changed (-1: none).
    let changed: (Location, Location)
    private var a = RenderFrames.unused
    private var b = RenderFrames.unused
    private var c = RenderFrames.unused
    private(set) var count = 0

    private static let unused = RenderFrame(conv: -1, location: -1, head: [], full: .empty, stale: nil,
                                            staleChanged: false, groups: nil)

    init(changed: (Location, Location)) {
        self.changed = changed
    }

    func index(of location: Location) -> Int? {
        if count > 0 && a.location == location { return 0 }
        if count > 1 && b.location == location { return 1 }
        if count > 2 && c.location == location { return 2 }
        return nil
    }

    mutating func append(_ frame: RenderFrame) {
        switch count {
        case 0: a = frame
        case 1: b = frame
        default: c = frame
        }
        count += 1
    }

    subscript(index: Int) -> RenderFrame {
        get {
            switch index {
            case 0: return a
            case 1: return b
            default: return c
            }
        }
        _modify {
            switch index {
            case 0: yield &a
            case 1: yield &b
            default: yield &c
            }
        }
    }
}
