import TypingCore
import TypingProtocol

/// The commands that rebuild a session from a snapshot's `member` and `streak`
/// events (Protocol.md, "Snapshots"): what a cluster's new owner of a partition
/// replays before the stream behind the snapshot. All of them at the snapshot's
/// `at`, in this order:
///
/// 1. members in the order of `joined` when the snapshot gives it, else as listed:
///    a `join` with the user's name, locale and settings, then an `open` (with its
///    thread and view) when the view is open, and an `open` of the side pane at its
///    thread when the member has one;
/// 2. streaks in the order of `started` when given, else as listed: a `type` with
///    its thread, activity (and status words) and the time left to its deadline
///    (`timeout_ms`); then
///    the same again in the order of `keystroke`, so that both orders are right;
/// 3. members whose screen an offline changed without a render (`forgotten`): a
///    `forget` each, which renders nothing, so that the next render compares them
///    from the empty indicator again;
/// 4. screens with announcement keys (with `--announce-after-ms`): a `restore`
///    each, those with a pending announcement first, in the order of their rank,
///    then the others as listed; it overrides what the replayed indicators
///    scheduled, so that each screen fires when it did and announces what it
///    would have.
///
/// A program that moves partitions between processes rebuilds them with it; the
/// snapshot tests rebuild with the same recipe (`rebuild(from:into:)`).
public enum SnapshotRebuild {
    /// The command lines, each ending in LF.
    public static func commands(members: [Event.Member], streaks: [Event.Streak]) -> [UInt8] {
        var members = members
        var streaks = streaks
        if members.contains(where: { $0.joined != nil }) {
            members = stableSorted(members) { ($0.joined ?? 0) < ($1.joined ?? 0) }
        }
        if streaks.contains(where: { $0.started != nil }) {
            streaks = stableSorted(streaks) { ($0.started ?? 0) < ($1.started ?? 0) }
        }
        var out = OutputBuffer()
        var forgotten: [Event.Member] = []
        for member in members {
            head("{\"cmd\":\"join\",\"conv\":", conv: member.conv, user: member.user, at: member.at, into: &out)
            if let name = member.name {
                out.append(",\"name\":")
                out.jsonString(name)
            }
            if let locale = member.locale {
                out.append(",\"locale\":")
                out.jsonString(locale)
            }
            out.append(member.sendTyping ? ",\"send_typing\":true" : ",\"send_typing\":false")
            out.append(member.receiveTyping ? ",\"receive_typing\":true}\n" : ",\"receive_typing\":false}\n")
            if member.open {
                head("{\"cmd\":\"open\",\"conv\":", conv: member.conv, user: member.user, at: member.at, into: &out)
                if let thread = member.thread {
                    out.append(",\"thread\":")
                    out.jsonIdentifier(thread)
                }
                if member.view == .list { out.append(",\"view\":\"list\"") }
                out.append("}\n")
            }
            if let side = member.side {
                head("{\"cmd\":\"open\",\"conv\":", conv: member.conv, user: member.user, at: member.at, into: &out)
                out.append(",\"thread\":")
                out.jsonIdentifier(side)
                out.append(",\"pane\":\"side\"}\n")
            }
            if member.forgotten { forgotten.append(member) }
        }
        for order in [streaks, stableSorted(streaks) { $0.keystroke < $1.keystroke }] {
            for streak in order {
                head("{\"cmd\":\"type\",\"conv\":", conv: streak.conv, user: streak.user, at: streak.at, into: &out)
                if let thread = streak.thread {
                    out.append(",\"thread\":")
                    out.jsonIdentifier(thread)
                }
                if streak.activity != .typing {
                    out.append(",\"activity\":")
                    out.jsonString(streak.activity.name)
                }
                if let status = streak.status {
                    out.append(",\"status\":")
                    out.jsonString(status)
                }
                out.append(",\"timeout_ms\":")
                // Deadlines are later than `at`; a subtraction that overflows is
                // no input the engine wrote, and gives a line it refuses.
                let (left, overflow) = streak.deadline.subtractingReportingOverflow(streak.at)
                out.appendDecimal(overflow ? -1 : left)
                out.append("}\n")
            }
        }
        for member in forgotten {
            head("{\"cmd\":\"forget\",\"conv\":", conv: member.conv, user: member.user, at: member.at, into: &out)
            out.append("}\n")
        }
        for (member, side, state) in restores(members) {
            head("{\"cmd\":\"restore\",\"conv\":", conv: member.conv, user: member.user, at: member.at, into: &out)
            if side { out.append(",\"pane\":\"side\"") }
            if let due = state.due {
                out.append(",\"announce_at\":")
                out.appendDecimal(due)
            }
            if let text = state.announced {
                out.append(",\"announced\":")
                out.jsonString(text)
            }
            out.append("}\n")
        }
        return out.bytes
    }

    /// The screens to `restore`, in the recipe's order: those with a pending
    /// announcement by rank, then those that only announced something, as listed.
    static func restores(_ members: [Event.Member])
        -> [(member: Event.Member, side: Bool, state: Event.Member.Announcement)]
    {
        var screens: [(member: Event.Member, side: Bool, state: Event.Member.Announcement)] = []
        for member in members {
            if !member.announcement.isNone { screens.append((member, false, member.announcement)) }
            if !member.sideAnnouncement.isNone { screens.append((member, true, member.sideAnnouncement)) }
        }
        return stableSorted(screens) { ($0.state.rank ?? Int.max) < ($1.state.rank ?? Int.max) }
    }

    /// Appends a command's opening, `start` (`{"cmd":"NAME","conv":`) then the
    /// conversation, user and time, leaving the object open for its other fields.
    static func head(_ start: StaticString, conv: Identifier, user: Identifier, at: Int, into out: inout OutputBuffer) {
        out.append(start)
        out.jsonIdentifier(conv)
        out.append(",\"user\":")
        out.jsonIdentifier(user)
        out.append(",\"at\":")
        out.appendDecimal(at)
    }

    /// `items` sorted by `less`, equal ones kept in their order.
    static func stableSorted<T>(_ items: [T], by less: (T, T) -> Bool) -> [T] {
        items.enumerated().sorted {
            less($0.element, $1.element) || (!less($1.element, $0.element) && $0.offset < $1.offset)
        }
        .map(\.element)
    }
}
