extension Engine {
    /// Writes an `indicator` event for each viewer in `scope` whose view of `c`
    /// differs from what they were last sent, in join order.
    ///
    /// Every member who is not typing sees the same view, the conversation's
    /// `fullView`; it is built once, and a member who holds the previous full view
    /// object is known to need the new one without comparing contents. Only typers
    /// (who see everyone but themselves) get views of their own.
    mutating func render<S: EventSink>(_ c: Int32, scope: RenderScope, sink: inout S) {
        let previous = conversations[c].fullView
        let full = view(of: c, excluding: MemberSlot.vacant, reuse: previous)
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
    mutating func refresh<S: EventSink>(_ slot: Int, of c: Int32, full: IndicatorView,
                                        previous: IndicatorView?, sink: inout S) {
        let user = conversations[c].members[slot].user
        guard user != MemberSlot.vacant else { return }
        let current: IndicatorView
        if conversations[c].members[slot].streak >= 0 {
            current = view(of: c, excluding: user, reuse: conversations[c].members[slot].lastSent)
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
        emit(.indicator(Indicator(at: now, conv: conversations[c].id, viewer: viewer, view: current)),
             to: &sink)
    }

    /// The view of conversation `c` for a viewer who is user `excluded` (or
    /// ``MemberSlot/vacant`` for one who is not typing): the typers in streak order
    /// but the viewer, and their phrase. When `reuse` already shows exactly that,
    /// it is returned instead of a new object.
    func view(of c: Int32, excluding excluded: Int32, reuse: IndicatorView? = nil) -> IndicatorView {
        let typers = conversations[c].typers
        let shown = typers.count - (excluded == MemberSlot.vacant ? 0 : 1)
        if shown <= 0 { return .empty }
        var packed: [UInt8] = []
        packed.reserveCapacity(24 * shown + 48)
        var first: (Int32, Int32, Int32) = (0, 0, 0)
        var count = 0
        for s in typers {
            let u = streaks[Int(s)].user
            if u == excluded { continue }
            switch count {
            case 0: first.0 = u
            case 1: first.1 = u
            case 2: first.2 = u
            default: break
            }
            count += 1
            IndicatorView.pack(users[u].id, into: &packed)
        }
        let textStart = packed.count
        Phrase.append(count: count, style: configuration.style, into: &packed) { index in
            users[index == 0 ? first.0 : index == 1 ? first.1 : first.2].displayName
        }
        if let reuse, reuse.textStart == textStart, reuse.packed == packed { return reuse }
        return IndicatorView(packed: packed, typerCount: count, textStart: textStart)
    }
}
