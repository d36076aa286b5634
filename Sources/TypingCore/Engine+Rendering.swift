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
        var full = view(of: c, excluding: MemberSlot.vacant)
        let fullChanged = full != previous
        if fullChanged {
            conversations[c].fullView = full
        } else {
            full = previous
        }
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
        let member = conversations[c].members[slot]
        guard member.isOccupied else { return }
        let current: IndicatorView
        if member.streak >= 0 {
            current = view(of: c, excluding: member.user)
            if member.lastSent == current { return }
        } else {
            current = full
            if member.lastSent === full { return }
            if member.lastSent !== previous && member.lastSent == full {
                conversations[c].setLastSent(full, at: slot)
                return
            }
        }
        conversations[c].setLastSent(current, at: slot)
        let viewer = member.fingerprint.isComplete ? Identifier(member.fingerprint) : users[member.user].id
        emit(.indicator(Indicator(at: now, conv: conversations[c].id, viewer: viewer, view: current)),
             to: &sink)
    }

    /// The view of conversation `c` for a viewer who is user `excluded` (or
    /// ``MemberSlot/vacant`` for one who is not typing): the typers in streak order
    /// but the viewer, and their phrase.
    func view(of c: Int32, excluding excluded: Int32) -> IndicatorView {
        let typers = conversations[c].typers
        let shown = typers.count - (excluded == MemberSlot.vacant ? 0 : 1)
        if shown <= 0 { return .empty }
        var ids: [Identifier] = []
        ids.reserveCapacity(shown)
        var first: (Int32, Int32, Int32) = (0, 0, 0)
        for s in typers {
            let u = streaks[Int(s)].user
            if u == excluded { continue }
            switch ids.count {
            case 0: first.0 = u
            case 1: first.1 = u
            case 2: first.2 = u
            default: break
            }
            ids.append(users[u].id)
        }
        var text: [UInt8] = []
        text.reserveCapacity(64)
        Phrase.append(count: ids.count, style: configuration.style, into: &text) { index in
            users[index == 0 ? first.0 : index == 1 ? first.1 : first.2].displayName
        }
        return IndicatorView(typing: ids, textBytes: text)
    }
}
