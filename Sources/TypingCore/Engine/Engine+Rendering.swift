/// Which viewers of a conversation a render looks at.
enum RenderScope {
    /// Every member, in join order: the typers or a typer's name changed.
    case everyone
    /// One member slot: a member who just joined.
    case member(Int)
}

extension Engine {
    /// Writes an `indicator` event for each viewer in `scope` whose view of `c`
    /// differs from what they were last sent, in join order.
    ///
    /// Every member who is not typing sees the same view, the conversation's
    /// `fullView`; it is built once, and a member who holds the previous full view
    /// object is known to need the new one without comparing contents. Only typers
    /// (who see everyone but themselves) get views of their own.
    mutating func render<S: EventSink & ~Copyable>(_ c: Int32, scope: RenderScope, sink: inout S) {
        let previous = conversations[c].fullView
        let full = fullView(of: c, reuse: previous)
        let fullChanged = full !== previous
        if fullChanged { conversations[c].fullView = full }
        switch scope {
        case .everyone:
            for slot in conversations[c].members.indices {
                refresh(slot, of: c, full: full, previous: fullChanged ? previous : nil, sink: &sink)
            }
        case .member(let slot):
            refresh(slot, of: c, full: full, previous: fullChanged ? previous : nil, sink: &sink)
        }
    }

    /// Brings one member's indicator up to date. `previous` is the old full view
    /// when it changed in this render (so a holder of it certainly needs `full`).
    mutating func refresh<S: EventSink & ~Copyable>(_ slot: Int, of c: Int32, full: IndicatorView,
                                        previous: IndicatorView?, sink: inout S) {
        let user = conversations[c].members[slot].user
        guard user != MemberSlot.vacant else { return }
        let current: IndicatorView
        let streak = conversations[c].members[slot].streak
        if streak >= 0 {
            current = typerView(of: c, streak: streak, full: full, last: conversations[c].members[slot].lastSent)
            if current === conversations[c].members[slot].lastSent { return }
        } else {
            current = full
            let last = conversations[c].members[slot].lastSent
            if last === full { return }
            if last !== previous && last == full {
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

    /// The view of conversation `c` for members who are not typing: all typers in
    /// streak order and their phrase. When `reuse` already shows exactly that, it is
    /// returned instead of a new object.
    func fullView(of c: Int32, reuse: IndicatorView? = nil) -> IndicatorView {
        let typers = conversations[c].typers
        if typers.isEmpty { return .empty }
        var packed: [UInt8] = []
        packed.reserveCapacity(24 * typers.count + 48)
        var starts: [Int32] = []
        starts.reserveCapacity(typers.count)
        for s in typers {
            starts.append(Int32(packed.count))
            IndicatorView.pack(users[streaks[s].user].id, into: &packed)
        }
        let textStart = packed.count
        Phrase.append(count: typers.count, style: configuration.style, into: &packed) { index in
            users[streaks[typers[index]].user].displayName
        }
        if let reuse, reuse.base == nil, reuse.textStart == textStart, reuse.storage == packed { return reuse }
        return IndicatorView(packed: packed, typerCount: typers.count, textStart: textStart, entryStarts: starts)
    }

    /// The view of typer `streak` in `c`: the full view without them, and the
    /// phrase for the others. Returns `last` when that is what it already shows
    /// (compared without building anything); otherwise a view derived from `full`.
    func typerView(of c: Int32, streak: Int32, full: IndicatorView, last: IndicatorView) -> IndicatorView {
        let typers = conversations[c].typers
        guard typers.count > 1, let index = typers.firstIndex(of: streak), index < full.entryStarts.count else {
            return .empty
        }
        var text: [UInt8] = []
        text.reserveCapacity(64)
        Phrase.append(count: typers.count - 1, style: configuration.style, into: &text) { position in
            users[streaks[typers[position < index ? position : position + 1]].user].displayName
        }
        let omitted = full.entryBytes(index)
        let sameText = last.withTextBytes { lastText in
            text.withUnsafeBytes { mine in lastText.count == mine.count && IndicatorView.bytesEqual(lastText, mine) }
        }
        if sameText && last.typerCount == typers.count - 1 {
            if let base = last.base, base === full, last.omitted == index { return last }
            let same = full.storage.withUnsafeBytes { bytes in
                last.withIDSegments { l1, l2 in
                    IndicatorView.equal(l1, l2, UnsafeRawBufferPointer(rebasing: bytes[0..<omitted.lowerBound]),
                                        UnsafeRawBufferPointer(rebasing: bytes[omitted.upperBound..<full.textStart]))
                }
            }
            if same { return last }
        }
        return IndicatorView(base: full, omitting: index, bytes: omitted, text: text)
    }
}
