extension Engine {
    /// The bytes of an `indicator` beyond its ids and phrase: keys, punctuation,
    /// the largest `at` and `more`, the LF.
    static let indicatorOverhead = 110
    /// The bytes of a phrase beyond its three names: its fixed words and a count.
    static let phraseOverhead = 64
    /// The bytes of a `typing` event beyond its ids.
    static let typingOverhead = 96

    /// The most bytes of events that applying `command` now could write (replies to
    /// `query`, `stats` and `snapshot` aside: they are what was asked for). It is an
    /// upper bound, not the output: every render of a conversation it touches is
    /// counted as if every viewer in the audience got a new indicator listing
    /// `--max-listed` ids as long as the room's longest, with a phrase of three
    /// names as long as its typers' longest. O(the conversations the command would
    /// render).
    ///
    /// It is what `--max-output-per-line` compares with, and what makes one line's
    /// output bounded: viewers × (ids listed + 1) × the longest id, per conversation
    /// rendered.
    public func outputBound(of command: Command) -> Int {
        var total = Bound()
        switch command {
        case let .join(conv, user, name, sendTyping):
            guard let u = findUser(user) else {
                return findConversation(conv).map { viewerBound($0, viewer: user.encodedBound) } ?? 0
            }
            if settingsChange(of: u, name: name, sendTyping: sendTyping).0.touchesStreaks {
                forEachStreak(of: u) { total.add(renderBound($0, newTyperName: 0)) }
            }
            if let c = findConversation(conv) { total.add(viewerBound(c, viewer: user.encodedBound)) }
        case let .type(conv, user, empty, _):
            guard let (c, u, slot) = membership(of: user, in: conv) else { return 0 }
            let typing = conversations[c].members[slot].streak >= 0
            if typing && (empty || configuration.order == .recent) {
                total.add(renderBound(c, newTyperName: 0))
            } else if !typing && !empty && users[u].sendsTyping {
                total.add(renderBound(c, newTyperName: users[u].nameBound))
            }
        case let .send(conv, user), let .leave(conv, user), let .remove(conv, user, _), let .close(conv, user):
            guard let (c, _, slot) = membership(of: user, in: conv), conversations[c].members[slot].streak >= 0 else {
                return 0
            }
            total.add(renderBound(c, newTyperName: 0))
        case let .offline(user):
            guard let u = findUser(user) else { return 0 }
            forEachStreak(of: u) { total.add(renderBound($0, newTyperName: 0)) }
        case let .open(conv, user):
            guard configuration.audience == .open, let (c, _, _) = membership(of: user, in: conv) else { return 0 }
            total.add(viewerBound(c))
        case let .user(user, name, sendTyping):
            guard let u = findUser(user),
                  settingsChange(of: u, name: name, sendTyping: sendTyping).0.touchesStreaks else { return 0 }
            forEachStreak(of: u) { total.add(renderBound($0, newTyperName: 0)) }
        case .tick, .query, .stats, .snapshot:
            return 0
        }
        return total.value
    }

    /// Calls `body` with the conversation of each of `u`'s streaks.
    func forEachStreak(of u: Int32, _ body: (Int32) -> Void) {
        var s = users[u].streaks.first
        while s >= 0 {
            body(streaks[s].conv)
            s = streaks[s].userNext
        }
    }

    /// The most bytes one render of `c` writes (with one more typer whose name
    /// takes `newTyperName` bytes, when one starts): a `typing` event, and an
    /// indicator for every viewer in the audience.
    func renderBound(_ c: Int32, newTyperName: Int) -> Int {
        let record = conversations[c]
        let viewers = configuration.audience == .members ? record.memberCount : record.openSlots.count
        var bound = Bound()
        bound.add(Engine.typingOverhead + record.id.encodedBound + Int(record.longestMemberID))
        bound.add(viewers, times: viewerBound(c, newTyper: newTyperName > 0, newTyperName: newTyperName))
        return bound.value
    }

    /// The most bytes of one indicator in `c` (to a viewer whose id takes `viewer`
    /// bytes, when they may not be a member yet).
    func viewerBound(_ c: Int32, viewer: Int = 0, newTyper: Bool = false, newTyperName: Int = 0) -> Int {
        let record = conversations[c]
        let typers = record.typers.count(in: streaks) + (newTyper ? 1 : 0)
        let listed = min(typers, configuration.maxListed)
        let id = Int(record.longestMemberID)
        let name = max(Int(record.longestTyperName), newTyperName)
        var bound = Bound()
        bound.add(Engine.indicatorOverhead + record.id.encodedBound + max(id, viewer) + Engine.phraseOverhead + 3 * name)
        bound.add(listed, times: id + 1)
        return bound.value
    }

    /// A sum that saturates at `Int.max` instead of trapping.
    struct Bound {
        private(set) var value = 0

        mutating func add(_ amount: Int) {
            let (sum, overflow) = value.addingReportingOverflow(amount)
            value = overflow ? .max : sum
        }

        mutating func add(_ count: Int, times amount: Int) {
            let (product, overflow) = count.multipliedReportingOverflow(by: amount)
            add(overflow ? .max : product)
        }
    }
}
