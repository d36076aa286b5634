/// Which viewers of a conversation a render looks at.
enum RenderScope {
    /// The audience, in join order: every member (`--audience members`) or the
    /// members whose view is open (`--audience open`).
    case audience
    /// One member slot: a member who just joined, or whose view just opened.
    case member(Int)
}

extension Engine {
    /// Writes an `indicator` event for each viewer in `scope` whose view of `c`
    /// differs from what they were last sent, in join order.
    ///
    /// Every member who is not typing sees the same view, the conversation's
    /// `fullView`; it is built once per render, in O(min(typers, max-listed)), and a
    /// member who holds the previous one is known to need the new one when its
    /// content changed. Typers (who see everyone but themselves) get views derived
    /// from it. The work is the first typers (O(listed + log typers)) plus the
    /// viewers in scope: under `--audience open`, the open views, not the members;
    /// and with no view open, nothing at all (the shared view is rebuilt when one
    /// opens).
    mutating func render<S: EventSink & ~Copyable>(_ c: Int32, scope: RenderScope, sink: inout S) {
        switch scope {
        case .audience:
            if configuration.audience == .open && conversations[c].openSlots.isEmpty {
                conversations[c].fullViewIsStale = true
                return
            }
            let head = collectHead(of: c)
            let previous = conversations[c].fullView
            let (full, changed) = fullView(of: c, head: head, previous: previous)
            conversations[c].fullView = full
            conversations[c].fullViewIsStale = false
            let stale = full === previous ? nil : previous
            switch configuration.audience {
            case .members:
                for slot in conversations[c].members.indices {
                    refresh(slot, of: c, head: head, full: full, stale: stale, staleChanged: changed, sink: &sink)
                }
            case .open:
                for slot in conversations[c].openSlots {
                    refresh(Int(slot), of: c, head: head, full: full, stale: stale, staleChanged: changed, sink: &sink)
                }
            }
        case .member(let slot):
            // Nothing changed for the others: the shared view is current, unless
            // nobody was watching when the typers changed (then nobody holds it).
            let needsHead = conversations[c].fullViewIsStale || conversations[c].members[slot].streak >= 0
            let head = needsHead ? collectHead(of: c) : []
            if conversations[c].fullViewIsStale {
                conversations[c].fullView = fullView(of: c, head: head, previous: conversations[c].fullView).0
                conversations[c].fullViewIsStale = false
            }
            refresh(slot, of: c, head: head, full: conversations[c].fullView, stale: nil, staleChanged: false, sink: &sink)
        }
    }

    /// The first typers of `c` a render needs: those the shared view packs
    /// (--max-listed + 1), and at least four, for the names of typers' phrases.
    /// Each gets its place in ``StreakRecord/rank``. O(those + log typers).
    mutating func collectHead(of c: Int32) -> [Int32] {
        let total = conversations[c].typers.count(in: streaks)
        let limit = max(min(total, configuration.maxListed + 1), min(total, 4))
        conversations[c].typers.collect(first: limit, in: streaks, into: &renderHead)
        for (rank, s) in renderHead.enumerated() { streaks[s].rank = Int32(rank) }
        return renderHead
    }

    /// The place of typer `s` among the typers of the current render's `head`, or
    /// `Int.max` when it comes after all of them.
    func rank(of s: Int32, in head: [Int32]) -> Int {
        let rank = Int(streaks[s].rank)
        return rank < head.count && head[rank] == s ? rank : Int.max
    }

    /// Brings one member's indicator up to date. `stale` is the shared view this
    /// render replaced, if any, and `staleChanged` whether its content differs from
    /// `full` (a holder of it then needs `full` without comparing).
    mutating func refresh<S: EventSink & ~Copyable>(_ slot: Int, of c: Int32, head: [Int32], full: IndicatorView,
                                                    stale: IndicatorView?, staleChanged: Bool, sink: inout S) {
        let user = conversations[c].members[slot].user
        guard user != MemberSlot.vacant else { return }
        let last = conversations[c].members[slot].lastSent
        let streak = conversations[c].members[slot].streak
        let current: IndicatorView
        if streak >= 0 {
            current = typerView(of: c, rank: rank(of: streak, in: head), viewerIsNamed: streaks[streak].isNamed,
                                head: head, full: full, last: last)
            if current === last { return }
        } else {
            current = full
            if last === full { return }
            if !(last === stale && staleChanged) && last == full {
                conversations[c].setLastSent(full, at: slot)
                return
            }
        }
        conversations[c].setLastSent(current, at: slot)
        let fingerprint = conversations[c].members[slot].fingerprint
        let viewer = fingerprint.isComplete ? Identifier(fingerprint) : users[user].id
        emit(.indicator(Event.Indicator(at: now, conv: conversations[c].id, viewer: viewer, view: current)),
             to: &sink)
    }

    /// The view of conversation `c` for members who are not typing: the first
    /// min(typers, max-listed) typers listed, the rest counted, and the phrase for
    /// all of them; it packs one entry more, for the typers' derived views. Returns
    /// `previous` itself when it packs exactly that, and whether the content (ids
    /// listed, `more`, text) differs from `previous`'s.
    func fullView(of c: Int32, head: [Int32], previous: IndicatorView) -> (IndicatorView, changed: Bool) {
        let total = conversations[c].typers.count(in: streaks)
        if total == 0 { return (.empty, previous != .empty) }
        let listed = min(total, configuration.maxListed)
        let packedCount = min(total, configuration.maxListed + 1)
        var packed: [UInt8] = []
        packed.reserveCapacity(24 * packedCount + 48)
        var starts: [Int32] = []
        starts.reserveCapacity(packedCount + 1)
        for index in 0..<packedCount {
            starts.append(Int32(packed.count))
            IndicatorView.pack(users[streaks[head[index]].user].id, into: &packed)
        }
        let textStart = packed.count
        starts.append(Int32(textStart))
        Phrase.append(count: total, named: conversations[c].typers.namedCount, style: configuration.style,
                      into: &packed) { index in
            users[streaks[head[index]].user].displayName
        }
        if previous.base == nil && previous.textStart == textStart && previous.listed == listed
            && previous.more == total - listed && previous.storage == packed {
            return (previous, false)
        }
        let view = IndicatorView(packed: packed, entryStarts: starts, listed: listed, more: total - listed,
                                 textStart: textStart)
        // Both list every entry they pack (the common case, no --max-listed cut):
        // different bytes are different content. Else compare what is listed.
        let uncut = previous.base == nil && previous.packedCount == previous.listed && packedCount == listed
        return (view, uncut || view != previous)
    }

    /// The view of the typer at `rank` in `c` (`Int.max`: after the typers in
    /// `head`): the shared view without them, and the phrase for the others. Returns `last` when that is what it already shows
    /// (compared without building a view); otherwise a view derived from `full`.
    ///
    /// `last` may be derived from an older shared view, or be one (the view a typer
    /// saw before they started): it is kept while its content is right, so no
    /// view is built for a typer whose view did not change. Such a typer keeps at
    /// most one old view alive, of at most `--max-listed` + 1 ids.
    func typerView(of c: Int32, rank: Int, viewerIsNamed: Bool, head: [Int32], full: IndicatorView,
                   last: IndicatorView) -> IndicatorView {
        let others = conversations[c].typers.count(in: streaks) - 1
        if others <= 0 { return last === IndicatorView.empty || last == .empty ? last : .empty }
        let listed = min(others, configuration.maxListed)
        let more = others - listed
        let omitted = rank < full.packedCount ? rank : -1
        var text: [UInt8] = []
        text.reserveCapacity(64)
        let named = conversations[c].typers.namedCount - (viewerIsNamed ? 1 : 0)
        Phrase.append(count: others, named: named, style: configuration.style, into: &text) { position in
            users[streaks[head[position < rank ? position : position + 1]].user].displayName
        }
        if last.listed == listed && last.more == more && text.withUnsafeBytes({ last.hasText($0) }) {
            if let base = last.base, base === full, last.omitted == omitted { return last }
            let same = IndicatorView.withSegments(of: full, omitting: omitted, listed: listed) { a1, a2 in
                last.withIDSegments { b1, b2 in IndicatorView.equal(a1, a2, b1, b2) }
            }
            if same { return last }
        }
        return IndicatorView(base: full, omitting: omitted, listed: listed, more: more, text: text)
    }
}
