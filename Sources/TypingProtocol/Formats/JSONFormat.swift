import TypingCore

/// The protocol's output format: one compact JSON object per line, keys in the
/// protocol's order (Protocol.md#framing-lines-in-lines-out, Protocol.md#events).
///
/// Indicator events of one change share their view (every viewer who is not typing
/// sees the same one, in their table and style), so the format keeps the encoded
/// `"typing":…,"text":…` tails of the last few shared views and copies one for the
/// next viewer instead of encoding it again. A typer's view is derived from the
/// shared one: its id list is copied from the shared view's encoded ids, leaving
/// one entry out.
public struct JSONFormat: EventFormat, ~Copyable {
    /// The shared views whose encoded tails are in `tails`.
    var cachedViews: [IndicatorView] = []
    /// The entry to replace next when the cache is full (round robin).
    var nextEviction = 0
    /// `,"typing":[…],"more":…,"activities":[…],"text":…}` and the LF, for each of
    /// `cachedViews`.
    var tails: [[UInt8]] = []
    /// The own view whose encoded ids are in `baseIDs`.
    var baseView: IndicatorView?
    /// The encoded ids of `baseView`, each after the first with its leading comma.
    var baseIDs = OutputBuffer(capacity: 1024)
    /// Where each entry of `baseView` starts in `baseIDs`, then the end.
    var baseEntryStarts: [Int] = []
    /// How many times a shared view's tail was encoded (each view once, however
    /// many viewers it goes to): what the cache saves is checked by tests.
    package private(set) var tailEncodings = 0
    /// The most shared views whose tails are kept: a room's viewers may read in a
    /// few languages and two styles, in any order.
    package static let cachedTails = 8

    /// A format with empty caches.
    public init() {}

    /// Appends one event and its LF.
    public mutating func encode(_ event: Event, into out: inout OutputBuffer) {
        switch event {
        case .indicator(let indicator): encode(indicator, into: &out)
        case .announce(let announce): encode(announce, into: &out)
        case .typing(let change): encode(change, into: &out)
        case .ok(let ok): encode(ok, into: &out)
        case .error(let error): encode(error, into: &out)
        case .state(let state): encode(state, into: &out)
        case .stats(let stats): encode(stats, into: &out)
        case .member(let member): encode(member, into: &out)
        case .streak(let streak): encode(streak, into: &out)
        case .snapshot(let snapshot): encode(snapshot, into: &out)
        }
    }

    /// `{"event":"indicator","at":…,"conv":…,"thread":…,"viewer":…,"pane":"side","view":"list",
    /// "typing":[…],"more":…,"activities":[…],"text":…}`
    mutating func encode(_ indicator: Event.Indicator, into out: inout OutputBuffer) {
        JSONFormat.screenHead(
            "{\"event\":\"indicator\",\"at\":", at: indicator.at, conv: indicator.conv,
            thread: indicator.thread, viewer: indicator.viewer, pane: indicator.pane,
            screen: indicator.screen, into: &out)
        let view = indicator.view
        if view.base != nil && !view.isVariant {
            // A typer's view: encoded for this viewer alone.
            encodeTail(of: view, into: &out)
            return
        }
        for index in cachedViews.indices where cachedViews[index] === view {
            tails[index].withUnsafeBytes { out.append($0) }
            return
        }
        let start = out.count
        encodeTail(of: view, into: &out)
        tailEncodings += 1
        if cachedViews.count < JSONFormat.cachedTails {
            cachedViews.append(view)
            tails.append(out.withBytes { Array(UnsafeRawBufferPointer(rebasing: $0[start...])) })
        } else {
            let slot = nextEviction
            nextEviction = (nextEviction + 1) % JSONFormat.cachedTails
            cachedViews[slot] = view
            tails[slot].removeAll(keepingCapacity: true)
            out.withBytes { tails[slot].append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[start...])) }
        }
    }

    /// Appends `,"typing":[…],"more":…,"activities":[…],"text":…}` and the LF for
    /// `view`: an own view's ids, or those of its base (but the one left out).
    mutating func encodeTail(of view: IndicatorView, into out: inout OutputBuffer) {
        out.append(",\"typing\":[")
        encodeIDs(of: view.base ?? view)
        let starts = baseEntryStarts, listed = view.listed, omitted = view.omitted
        baseIDs.withBytes { ids in
            if omitted < 0 {
                out.append(UnsafeRawBufferPointer(rebasing: ids[0..<starts[listed]]))
            } else if omitted == 0 {
                // Entry 1 on, without entry 1's leading comma.
                if listed > 0 {
                    out.append(UnsafeRawBufferPointer(rebasing: ids[(starts[1] + 1)..<starts[listed + 1]]))
                }
            } else {
                out.append(UnsafeRawBufferPointer(rebasing: ids[0..<starts[omitted]]))
                out.append(UnsafeRawBufferPointer(rebasing: ids[starts[omitted + 1]..<starts[listed + 1]]))
            }
        }
        out.append("]")
        if view.more > 0 {
            out.append(",\"more\":")
            out.appendDecimal(view.more)
        }
        if view.showsActivities {
            out.append(",\"activities\":[")
            var first = true
            view.forEachActivity { activity in
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                out.append(UInt8(ascii: "\""))
                out.append(contentsOf: activity.name)
                out.append(UInt8(ascii: "\""))
            }
            out.append("]")
        }
        out.append(",\"text\":")
        view.withTextBytes { out.jsonString($0) }
        out.append("}\n")
    }

    /// Encodes every packed id of own view `view` into `baseIDs` (`"a"`, `,"b"`, …
    /// back to back) with where each entry starts (with its comma), then the end,
    /// unless they are there already.
    mutating func encodeIDs(of view: IndicatorView) {
        guard baseView !== view else { return }
        baseIDs.removeAll()
        baseEntryStarts.removeAll(keepingCapacity: true)
        view.forEachPacked { id, escapes in
            baseEntryStarts.append(baseIDs.count)
            if baseEntryStarts.count > 1 { baseIDs.append(UInt8(ascii: ",")) }
            baseIDs.jsonIdentifier(bytes: id, escapes: escapes)
        }
        baseEntryStarts.append(baseIDs.count)
        baseView = view
    }

    /// `{"event":"typing","at":…,"conv":…,"thread":…,"user":…,"state":…,"activity":…,"status":…,"reason":…}`
    func encode(_ change: Event.Typing, into out: inout OutputBuffer) {
        out.append("{\"event\":\"typing\",\"at\":")
        out.appendDecimal(change.at)
        out.append(",\"conv\":")
        out.jsonIdentifier(change.conv)
        if let thread = change.thread {
            out.append(",\"thread\":")
            out.jsonIdentifier(thread)
        }
        out.append(",\"user\":")
        out.jsonIdentifier(change.user)
        out.append(",\"state\":")
        out.jsonString(change.state.rawValue)
        if let activity = change.activity {
            out.append(",\"activity\":")
            out.jsonString(activity.name)
        }
        if let status = change.status {
            out.append(",\"status\":")
            out.jsonString(status)
        }
        if let reason = change.reason {
            out.append(",\"reason\":")
            out.jsonString(reason.rawValue)
        }
        out.append("}\n")
    }

    /// `{"event":"ok","line":…,"id":…}`
    func encode(_ ok: Event.OK, into out: inout OutputBuffer) {
        out.append("{\"event\":\"ok\",\"line\":")
        out.appendDecimal(ok.line)
        out.append(",\"id\":")
        out.jsonRequestID(ok.id)
        out.append("}\n")
    }

    /// `{"event":"error","line":…,"id":…,"code":…,"message":…,"field":…,"column":…}`
    func encode(_ error: Event.Error, into out: inout OutputBuffer) {
        out.append("{\"event\":\"error\",\"line\":")
        out.appendDecimal(error.line)
        if let id = error.id {
            out.append(",\"id\":")
            out.jsonRequestID(id)
        }
        out.append(",\"code\":")
        out.jsonString(error.code.rawValue)
        out.append(",\"message\":")
        out.jsonString(error.message)
        if let field = error.field {
            out.append(",\"field\":")
            out.jsonString(field)
        }
        if let column = error.column {
            out.append(",\"column\":")
            out.appendDecimal(column)
        }
        out.append("}\n")
    }

    /// `{"event":"state","at":…,"id":…,"conv":…,"thread":…,"members":[…],"open":[…],"typing":[…],"activities":[…]}`
    func encode(_ state: Event.State, into out: inout OutputBuffer) {
        out.append("{\"event\":\"state\",\"at\":")
        out.appendDecimal(state.at)
        if let id = state.id {
            out.append(",\"id\":")
            out.jsonRequestID(id)
        }
        out.append(",\"conv\":")
        out.jsonIdentifier(state.conv)
        if let thread = state.thread {
            out.append(",\"thread\":")
            out.jsonIdentifier(thread)
        }
        out.append(",\"members\":")
        out.jsonArray(state.members)
        out.append(",\"open\":")
        out.jsonArray(state.open)
        out.append(",\"typing\":")
        out.jsonArray(state.typing)
        if let activities = state.activities {
            out.append(",\"activities\":[")
            for (index, activity) in activities.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.jsonString(activity.name)
            }
            out.append("]")
        }
        out.append("}\n")
    }

    /// `{"event":"stats","at":…,"id":…,"lines":…,…,"events":…}`
    func encode(_ stats: Event.Stats, into out: inout OutputBuffer) {
        out.append("{\"event\":\"stats\",\"at\":")
        out.appendDecimal(stats.at)
        if let id = stats.id {
            out.append(",\"id\":")
            out.jsonRequestID(id)
        }
        for (key, value): (StaticString, Int) in [
            (",\"lines\":", stats.lines), (",\"commands\":", stats.commands), (",\"errors\":", stats.errors),
            (",\"conversations\":", stats.conversations), (",\"members\":", stats.members),
            (",\"typing\":", stats.typing), (",\"events\":", stats.events)
        ] {
            out.append(key)
            out.appendDecimal(value)
        }
        out.append("}\n")
    }
}

extension JSONFormat {
    /// The keys an indicator and an announcement share, after `start` (`{"event":…,"at":`):
    /// the time, `conv`, `thread`, `viewer`, `pane` and `view`, each as the screen has it.
    @inline(__always)
    static func screenHead(
        _ start: StaticString, at: Int, conv: Identifier, thread: Identifier?, viewer: Identifier,
        pane: Command.Pane, screen: Command.View, into out: inout OutputBuffer
    ) {
        out.append(start)
        out.appendDecimal(at)
        out.append(",\"conv\":")
        out.jsonIdentifier(conv)
        if let thread {
            out.append(",\"thread\":")
            out.jsonIdentifier(thread)
        }
        out.append(",\"viewer\":")
        out.jsonIdentifier(viewer)
        if pane == .side { out.append(",\"pane\":\"side\"") }
        if screen == .list { out.append(",\"view\":\"list\"") }
    }

    /// `{"event":"announce","at":…,"conv":…,"thread":…,"viewer":…,"pane":"side","view":"list","text":…}`:
    /// `thread`, `pane` and `view` as in the screen's indicators.
    func encode(_ announce: Event.Announce, into out: inout OutputBuffer) {
        JSONFormat.screenHead(
            "{\"event\":\"announce\",\"at\":", at: announce.at, conv: announce.conv,
            thread: announce.thread, viewer: announce.viewer, pane: announce.pane,
            screen: announce.screen, into: &out)
        out.append(",\"text\":")
        out.jsonString(announce.text)
        out.append("}\n")
    }

    /// `{"event":"member","at":…,"conv":…,"user":…,"name":…,"locale":…,"send_typing":…,
    /// "receive_typing":false,"open":…,"thread":…,"view":"list","forgotten":true,"side":…,"joined":…,
    /// "announce_at":…,"announce_rank":…,"announced":…,"side_announce_at":…,"side_announce_rank":…,"side_announced":…}`:
    /// `locale`, `receive_typing`, `thread`, `view`, `forgotten` and `side` (the
    /// thread of the side pane) only when they differ from what a plain `join` gives;
    /// the announcement keys only for a screen with a pending announcement or a last
    /// announced text.
    func encode(_ member: Event.Member, into out: inout OutputBuffer) {
        out.append("{\"event\":\"member\",\"at\":")
        out.appendDecimal(member.at)
        out.append(",\"conv\":")
        out.jsonIdentifier(member.conv)
        out.append(",\"user\":")
        out.jsonIdentifier(member.user)
        if let name = member.name {
            out.append(",\"name\":")
            out.jsonString(name)
        }
        if let locale = member.locale {
            out.append(",\"locale\":")
            out.jsonString(locale)
        }
        out.append(member.sendTyping ? ",\"send_typing\":true" : ",\"send_typing\":false")
        if !member.receiveTyping { out.append(",\"receive_typing\":false") }
        out.append(member.open ? ",\"open\":true" : ",\"open\":false")
        if let thread = member.thread {
            out.append(",\"thread\":")
            out.jsonIdentifier(thread)
        }
        if member.view == .list { out.append(",\"view\":\"list\"") }
        if member.forgotten { out.append(",\"forgotten\":true") }
        if let side = member.side {
            out.append(",\"side\":")
            out.jsonIdentifier(side)
        }
        if let joined = member.joined {
            out.append(",\"joined\":")
            out.appendDecimal(joined)
        }
        encode(member.announcement, keys: (",\"announce_at\":", ",\"announce_rank\":", ",\"announced\":"), into: &out)
        encode(
            member.sideAnnouncement,
            keys: (",\"side_announce_at\":", ",\"side_announce_rank\":", ",\"side_announced\":"), into: &out)
        out.append("}\n")
    }

    /// A screen's announcement state in a `member` event: its pending
    /// announcement's time and rank, and its last announced text, each when there is
    /// one, under the three `keys` (those of the main screen or of the side pane).
    func encode(
        _ state: Event.Member.Announcement, keys: (due: StaticString, rank: StaticString, text: StaticString),
        into out: inout OutputBuffer
    ) {
        if let due = state.due {
            out.append(keys.due)
            out.appendDecimal(due)
            out.append(keys.rank)
            out.appendDecimal(state.rank ?? 0)
        }
        if let text = state.announced {
            out.append(keys.text)
            out.jsonString(text)
        }
    }

    /// `{"event":"streak","at":…,"conv":…,"thread":…,"user":…,"activity":…,"status":…,"deadline":…,"keystroke":…}`
    func encode(_ streak: Event.Streak, into out: inout OutputBuffer) {
        out.append("{\"event\":\"streak\",\"at\":")
        out.appendDecimal(streak.at)
        out.append(",\"conv\":")
        out.jsonIdentifier(streak.conv)
        if let thread = streak.thread {
            out.append(",\"thread\":")
            out.jsonIdentifier(thread)
        }
        out.append(",\"user\":")
        out.jsonIdentifier(streak.user)
        if streak.activity != .typing {
            out.append(",\"activity\":")
            out.jsonString(streak.activity.name)
        }
        if let status = streak.status {
            out.append(",\"status\":")
            out.jsonString(status)
        }
        out.append(",\"deadline\":")
        out.appendDecimal(streak.deadline)
        out.append(",\"keystroke\":")
        out.appendDecimal(streak.keystroke)
        if let started = streak.started {
            out.append(",\"started\":")
            out.appendDecimal(started)
        }
        out.append("}\n")
    }

    /// `{"event":"snapshot","at":…,"id":…,"conversations":…,"members":…,"typing":…}`
    func encode(_ snapshot: Event.Snapshot, into out: inout OutputBuffer) {
        out.append("{\"event\":\"snapshot\",\"at\":")
        out.appendDecimal(snapshot.at)
        if let id = snapshot.id {
            out.append(",\"id\":")
            out.jsonRequestID(id)
        }
        out.append(",\"conversations\":")
        out.appendDecimal(snapshot.conversations)
        out.append(",\"members\":")
        out.appendDecimal(snapshot.members)
        out.append(",\"typing\":")
        out.appendDecimal(snapshot.typing)
        out.append("}\n")
    }
}

/// JSON strings, as the protocol writes them: `"` and `\` escaped; U+0000–U+001F as
/// `\b \f \n \r \t` or `\u00xx`; U+007F–U+009F, U+2028 and U+2029 as `\u007f`,
/// `\u0085`, `\u2028`, … (lowercase hex), so that no line splitter breaks an event
/// (Protocol.md#framing-lines-in-lines-out); every other character as UTF-8, `/`
/// unescaped. The input is valid UTF-8.
extension OutputBuffer {
    /// Appends UTF-8 bytes as a quoted, escaped JSON string.
    package mutating func jsonString(_ text: UnsafeRawBufferPointer) {
        if !OutputBuffer.mayNeedEscaping(text) {
            appendQuoted(text)
            return
        }
        append(UInt8(ascii: "\""))
        var runStart = 0, index = 0
        while index < text.count {
            let byte = text[index]
            var length = 0
            if byte < 0x20 || byte == 0x22 || byte == 0x5C {
                length = 1
            } else if byte == 0x7F {
                length = 1
            } else if byte == 0xC2, index + 1 < text.count, (0x80...0x9F).contains(text[index + 1]) {
                length = 2
            } else if byte == 0xE2, index + 2 < text.count, text[index + 1] == 0x80,
                text[index + 2] == 0xA8 || text[index + 2] == 0xA9
            {
                length = 3
            }
            guard length > 0 else {
                index += 1
                continue
            }
            append(UnsafeRawBufferPointer(rebasing: text[runStart..<index]))
            switch length {
            case 1: jsonEscape(byte)
            case 2: jsonUnicodeEscape(UInt16(text[index + 1]))
            default: jsonUnicodeEscape(0x2000 | UInt16(text[index + 2]) - 0x80)
            }
            index += length
            runStart = index
        }
        append(UnsafeRawBufferPointer(rebasing: text[runStart...]))
        append(UInt8(ascii: "\""))
    }

    /// Appends `\u` and the four lowercase hex digits of `unit`.
    mutating func jsonUnicodeEscape(_ unit: UInt16) {
        let hex: StaticString = "0123456789abcdef"
        append("\\u")
        hex.withUTF8Buffer { digits in
            for shift in stride(from: 12, through: 0, by: -4) { append(digits[Int(unit >> UInt16(shift) & 0xF)]) }
        }
    }

    /// Appends a quoted, escaped JSON string.
    package mutating func jsonString(_ text: String) {
        var text = text
        text.withUTF8 { jsonString(UnsafeRawBufferPointer($0)) }
    }

    /// Appends an id as a quoted JSON string, copying it as is when no byte needs
    /// an escape (the id knows).
    @inline(__always)
    package mutating func jsonIdentifier(_ id: Identifier) {
        let escapes = id.needsEscaping
        id.withUnsafeBytes { jsonIdentifier(bytes: $0, escapes: escapes) }
    }

    /// Appends id bytes as a quoted JSON string; `escapes` says whether any byte
    /// needs an escape (if not, they are copied as they are).
    @inline(__always)
    package mutating func jsonIdentifier(bytes: UnsafeRawBufferPointer, escapes: Bool) {
        if escapes { jsonString(bytes) } else { appendQuoted(bytes) }
    }

    /// Appends a JSON array of id strings.
    mutating func jsonArray(_ ids: [Identifier]) {
        append(UInt8(ascii: "["))
        for (index, id) in ids.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            jsonIdentifier(id)
        }
        append(UInt8(ascii: "]"))
    }

    /// Appends an `id` value: a string or an integer.
    mutating func jsonRequestID(_ id: Request.ID) {
        switch id {
        case .string(let text): jsonString(text)
        case .integer(let value): appendDecimal(value)
        }
    }

    /// Appends `"`, the bytes and `"` (bytes that need no escaping).
    @inline(__always)
    mutating func appendQuoted(_ bytes: UnsafeRawBufferPointer) {
        let total = bytes.count + 2
        appendUninitialized(total) { target in
            target.storeBytes(of: UInt8(ascii: "\""), as: UInt8.self)
            if let source = bytes.baseAddress { (target + 1).copyMemory(from: source, byteCount: bytes.count) }
            target.storeBytes(of: UInt8(ascii: "\""), toByteOffset: total - 1, as: UInt8.self)
        }
    }

    /// Appends the escape sequence of one byte that needs one (below 0x20, `"`,
    /// `\\` or 0x7F).
    mutating func jsonEscape(_ byte: UInt8) {
        let short: UInt8
        switch byte {
        case 0x22: short = UInt8(ascii: "\"")
        case 0x5C: short = UInt8(ascii: "\\")
        case 0x08: short = UInt8(ascii: "b")
        case 0x0C: short = UInt8(ascii: "f")
        case 0x0A: short = UInt8(ascii: "n")
        case 0x0D: short = UInt8(ascii: "r")
        case 0x09: short = UInt8(ascii: "t")
        default:
            jsonUnicodeEscape(UInt16(byte))
            return
        }
        append(UInt8(ascii: "\\"))
        append(short)
    }

    /// True when some byte may need an escape (``Identifier/mayNeedEscape(_:)``);
    /// eight bytes at a time.
    @inline(__always)
    static func mayNeedEscaping(_ text: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= text.count {
            if Identifier.mayNeedEscape(text.loadUnaligned(fromByteOffset: index, as: UInt64.self)) { return true }
            index += 8
        }
        while index < text.count {
            if Identifier.mayNeedEscape(byte: text[index]) { return true }
            index += 1
        }
        return false
    }
}
