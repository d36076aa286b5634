extension Engine {
    /// What a `join` or `user` changed in a user's settings (Protocol.md#user-settings).
    struct SettingsChange {
        /// The display name, or whether the user is named, changed.
        var renamed = false
        /// `send_typing` went from true to false: the user's streaks stop.
        var hides = false
        /// The locale changed (set where there was none, or to another tag,
        /// ignoring ASCII case).
        var relocalized = false
        /// `receive_typing` changed.
        var receiveChanged = false

        /// True when conversations where the user types must be visited.
        var touchesStreaks: Bool { renamed || hides }
        /// True when every conversation of the user must be visited.
        var touchesViews: Bool { relocalized || receiveChanged }
    }

    /// `user`: sets the name, `send_typing`, `locale` and `receive_typing` of a user
    /// who is a member of some conversation, visiting every conversation where they
    /// type (name, hiding), then every conversation they are in (language, seeing
    /// typing).
    mutating func user<S: EventSink & ~Copyable>(
        _ user: Identifier, name: String?, sendTyping: Bool?, locale: String?,
        receiveTyping: Bool?, sink: inout S
    ) -> Failure? {
        guard let u = findUser(user) else {
            return Failure(
                code: .notMember, message: "user \(Quote.id(user)) is not a member of any conversation",
                field: "user")
        }
        var change = applySettings(to: u, name: name, sendTyping: sendTyping)
        visitStreaks(of: u, except: nil, for: change, sink: &sink)
        applyViewSettings(to: u, locale: locale, receiveTyping: receiveTyping, into: &change)
        visitViews(of: u, except: nil, for: change, sink: &sink)
        return nil
    }

    /// What setting the name and `send_typing` of user `u` (nil: unchanged) would
    /// change, and the display name it would set. A rename counts when the display
    /// name's bytes, or whether the user is named, change.
    func settingsChange(of u: UserIndex, name: String?, sendTyping: Bool?)
        -> (SettingsChange, display: String?, asGiven: Bool)
    {
        var change = SettingsChange()
        var display: String?, asGiven = false
        if let name {
            (display, asGiven) = DisplayName.clean(name)
            let text = display ?? DisplayName.unknown
            change.renamed = !text.sameBytes(as: users[u].displayName) || (display != nil) != users[u].isNamed
        }
        if let sendTyping { change.hides = !sendTyping && users[u].sendsTyping }
        return (change, display, asGiven)
    }

    /// Sets the name and `send_typing` of user `u` (nil: unchanged) and says what
    /// changed.
    mutating func applySettings(to u: UserIndex, name: String?, sendTyping: Bool?) -> SettingsChange {
        let (change, display, asGiven) = settingsChange(of: u, name: name, sendTyping: sendTyping)
        if change.renamed {
            let shown = display ?? DisplayName.unknown
            if !users[u].streaks.first.isNone {
                retallyName(of: u, from: users[u].nameBound, to: UserRecord.nameBound(of: shown))
            }
            users[u].displayName = shown
            users[u].isNamed = display != nil
        }
        if let name {
            // The name as given, where it is not what is shown (also when the
            // display name did not change: "Ana " after "Ana").
            if display != nil && !asGiven { givenNames[u] = name } else { givenNames[u] = nil }
        }
        if let sendTyping { users[u].sendsTyping = sendTyping }
        return change
    }

    /// Moves the name of user `u` in the tallies of the locations where they type
    /// from `old` bytes to `new` (a rename): O(their streaks), which the rename
    /// visits anyway.
    mutating func retallyName(of u: UserIndex, from old: Int, to new: Int) {
        guard old != new else { return }
        var s = users[u].streaks.first
        while !s.isNone {
            let c = streaks[s].conv, location = streaks[s].location
            conversations[c][location: location].typerNameLengths.remove(Int32(clamping: old))
            conversations[c][location: location].typerNameLengths.add(Int32(clamping: new))
            s = streaks[s].userNext
        }
    }

    /// True when setting `locale` and `receiveTyping` (nil: unchanged) for user `u`
    /// would change something that every conversation of theirs must show.
    func viewSettingsChange(of u: UserIndex, locale: String?, receiveTyping: Bool?) -> Bool {
        if let locale {
            guard let current = locales[u], PhraseBook.sameTag(current.tag, locale) else { return true }
        }
        if let receiveTyping, receiveTyping != users[u].receivesTyping { return true }
        return false
    }

    /// Sets the locale and `receive_typing` of user `u` (nil: unchanged), noting in
    /// `change` what changed. Their member slots are brought in step by the visits.
    mutating func applyViewSettings(
        to u: UserIndex, locale: String?, receiveTyping: Bool?, into change: inout SettingsChange
    ) {
        if let locale {
            if let current = locales[u], PhraseBook.sameTag(current.tag, locale) {
                // The same tag: nothing changes, not even its case.
            } else {
                locales[u] = UserLocale(tag: locale, table: UInt16(configuration.phrases.table(for: locale)))
                change.relocalized = true
            }
        }
        if let receiveTyping, receiveTyping != users[u].receivesTyping {
            users[u].receivesTyping = receiveTyping
            change.receiveChanged = true
        }
    }

    /// The table user `u` gets.
    @inline(__always)
    func table(of u: UserIndex) -> UInt16 {
        locales[u]?.table ?? UInt16(configuration.phrases.defaultTable)
    }

    /// Brings member `slot` of `c` (user `u`) in step with the user's table and
    /// `receive_typing`: a member who stops receiving typing forgets what they were
    /// sent, without an event; one who starts again is compared from the empty
    /// indicator.
    mutating func syncSlot(_ slot: Int, of c: ConversationIndex, user u: UserIndex) {
        conversations[c][member: slot].table = table(of: u)
        let receives = users[u].receivesTyping
        if conversations[c][member: slot].receives != receives {
            conversations[c].setReceives(receives, at: slot)
            conversations[c].setLastSent(.empty, at: slot)
            forgetAnnouncements(of: c, u, .main)
            forgetAnnouncements(of: c, u, .side)
        }
    }

    /// Visits every conversation where `u` types but `except`, in the order the
    /// streaks began: when hiding, the streak stops (its `typing` event and a
    /// render); after a rename, the typer takes their new place and the
    /// conversation is re-rendered.
    mutating func visitStreaks<S: EventSink & ~Copyable>(
        of u: UserIndex, except: ConversationIndex?, for change: SettingsChange,
        sink: inout S
    ) {
        guard change.touchesStreaks else { return }
        var s = users[u].streaks.first
        while !s.isNone {
            let next = streaks[s].userNext
            if streaks[s].conv != except { update(s, for: change, also: -1, sink: &sink) }
            s = next
        }
    }

    /// Visits every conversation `u` is a member of but `except`, in the order they
    /// joined them, after a change of locale or `receive_typing`: each renders
    /// (the user's own view, usually the only one to change).
    mutating func visitViews<S: EventSink & ~Copyable>(
        of u: UserIndex, except: ConversationIndex?, for change: SettingsChange,
        sink: inout S
    ) {
        guard change.touchesViews else { return }
        let first = users[u].memberships
        var link = first
        repeat {
            let c = memberships[link].conv
            link = memberships[link].next
            guard c != except, let slot = conversations[c].slot(of: u) else { continue }
            syncSlot(slot, of: c, user: u)
            render(c, scope: .member(slot), sink: &sink)
        } while link != first
    }

    /// Applies `change` to streak `s` and its conversation, whose render also
    /// compares member slot `also` (-1: none).
    mutating func update<S: EventSink & ~Copyable>(
        _ s: StreakIndex, for change: SettingsChange, also slot: Int,
        sink: inout S
    ) {
        let c = streaks[s].conv, location = streaks[s].location
        if change.hides {
            stop(s, reason: .hidden, render: false, sink: &sink)
        } else {
            removeTyper(s, from: c)
            insertTyper(s, in: c)
        }
        render(c, scope: slot >= 0 ? .locationAndMember(location, slot) : .location(location), sink: &sink)
    }
}
