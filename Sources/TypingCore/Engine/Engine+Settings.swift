extension Engine {
    /// What a `join` or `user` changed in a user's settings (§D).
    struct SettingsChange {
        /// The display name, or whether the user is named, changed.
        var renamed = false
        /// `send_typing` went from true to false: the user's streaks stop.
        var hides = false

        /// True when conversations where the user types must be visited.
        var touchesStreaks: Bool { renamed || hides }
    }

    /// `user`: sets the name and `send_typing` of a user who is a member of some
    /// conversation, and visits every conversation where they type.
    mutating func user<S: EventSink & ~Copyable>(_ user: Identifier, name: String?, sendTyping: Bool?,
                                                 sink: inout S) -> Failure? {
        guard let u = findUser(user) else {
            return Failure(code: .notMember, message: "user \(Quote.id(user)) is not a member of any conversation",
                           field: "user")
        }
        let change = applySettings(to: u, name: name, sendTyping: sendTyping)
        visitStreaks(of: u, except: nil, for: change, sink: &sink)
        return nil
    }

    /// What setting the name and `send_typing` of user `u` (nil: unchanged) would
    /// change, and the display name it would set. A rename counts when the display
    /// name's bytes, or whether the user is named, change.
    func settingsChange(of u: Int32, name: String?, sendTyping: Bool?) -> (SettingsChange, display: String?) {
        var change = SettingsChange()
        var display: String?
        if let name {
            display = DisplayName.render(name)
            let text = display ?? DisplayName.unknown
            change.renamed = !text.sameBytes(as: users[u].displayName) || (display != nil) != users[u].isNamed
        }
        if let sendTyping { change.hides = !sendTyping && users[u].sendsTyping }
        return (change, display)
    }

    /// Sets the name and `send_typing` of user `u` (nil: unchanged) and says what
    /// changed.
    mutating func applySettings(to u: Int32, name: String?, sendTyping: Bool?) -> SettingsChange {
        let (change, display) = settingsChange(of: u, name: name, sendTyping: sendTyping)
        if change.renamed {
            users[u].displayName = display ?? DisplayName.unknown
            users[u].isNamed = display != nil
        }
        if let sendTyping { users[u].sendsTyping = sendTyping }
        return change
    }

    /// Visits every conversation where `u` types but `except`, in the order the
    /// streaks began: when hiding, the streak stops (its `typing` event and a
    /// render); after a rename, the typer takes their new place and the
    /// conversation is re-rendered.
    mutating func visitStreaks<S: EventSink & ~Copyable>(of u: Int32, except: Int32?, for change: SettingsChange,
                                                         sink: inout S) {
        guard change.touchesStreaks else { return }
        var s = users[u].streaks.first
        while s >= 0 {
            let next = streaks[s].userNext
            if streaks[s].conv != except { update(s, for: change, sink: &sink) }
            s = next
        }
    }

    /// Applies `change` to streak `s` and its conversation.
    mutating func update<S: EventSink & ~Copyable>(_ s: Int32, for change: SettingsChange, sink: inout S) {
        if change.hides {
            stop(s, reason: .hidden, render: true, sink: &sink)
        } else {
            let c = streaks[s].conv
            removeTyper(s, from: c)
            insertTyper(s, in: c)
            render(c, scope: .audience, sink: &sink)
        }
    }
}
