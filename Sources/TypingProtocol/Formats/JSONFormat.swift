import TypingCore

/// The protocol's output format: one compact JSON object per line, keys in the
/// protocol's order (§1 and §4 of the spec).
///
/// Indicator events of one change share their view (every member who is not typing
/// sees the same one), so the format keeps the encoded `"typing":…,"text":…` tail of
/// the last view and copies it for the next viewer instead of encoding it again. A
/// typer's view is derived from that shared one: its id list is copied from the
/// shared view's encoded ids, leaving one entry out.
public struct JSONFormat: EventFormat, ~Copyable {
    /// The view whose encoded tail is in `tail`.
    var cachedView: IndicatorView?
    /// `,"typing":[…],"text":"…"}` and the LF, for `cachedView`.
    var tail = OutputBuffer(capacity: 256)
    /// The own view whose encoded ids are in `baseIDs`.
    var baseView: IndicatorView?
    /// The encoded ids of `baseView`, each after the first with its leading comma.
    var baseIDs = OutputBuffer(capacity: 1024)
    /// Where each entry of `baseView` starts in `baseIDs`, then the end.
    var baseEntryStarts: [Int] = []

    /// A format with empty caches.
    public init() {}

    /// Appends one event and its LF.
    public mutating func encode(_ event: Event, into out: inout OutputBuffer) {
        switch event {
        case .indicator(let indicator): encode(indicator, into: &out)
        case .typing(let change): encode(change, into: &out)
        case .ok(let ok): encode(ok, into: &out)
        case .error(let error): encode(error, into: &out)
        case .state(let state): encode(state, into: &out)
        case .stats(let stats): encode(stats, into: &out)
        }
    }

    /// `{"event":"indicator","at":…,"conv":…,"viewer":…,"typing":[…],"text":…}`
    mutating func encode(_ indicator: Event.Indicator, into out: inout OutputBuffer) {
        out.append("{\"event\":\"indicator\",\"at\":")
        out.appendDecimal(indicator.at)
        out.append(",\"conv\":")
        out.jsonIdentifier(indicator.conv)
        out.append(",\"viewer\":")
        out.jsonIdentifier(indicator.viewer)
        let view = indicator.view
        if let base = view.base {
            // A typer's view: the base's encoded ids without the omitted entry.
            encodeIDs(of: base)
            out.append(",\"typing\":[")
            let start = baseEntryStarts[view.omitted], end = baseEntryStarts[view.omitted + 1]
            baseIDs.withBytes { ids in
                if view.omitted == 0 {
                    if end < ids.count { out.append(UnsafeRawBufferPointer(rebasing: ids[(end + 1)...])) }
                } else {
                    out.append(UnsafeRawBufferPointer(rebasing: ids[0..<start]))
                    out.append(UnsafeRawBufferPointer(rebasing: ids[end...]))
                }
            }
            out.append("],\"text\":")
            view.withTextBytes { out.jsonString($0) }
            out.append("}\n")
            return
        }
        if cachedView !== view {
            encodeIDs(of: view)
            tail.removeAll()
            tail.append(",\"typing\":[")
            tail.append(baseIDs)
            tail.append("],\"text\":")
            view.withTextBytes { tail.jsonString($0) }
            tail.append("}\n")
            cachedView = view
        }
        out.append(tail)
    }

    /// Encodes the ids of own view `view` into `baseIDs` (`"a"`, `,"b"`, … back to
    /// back) with where each entry starts, unless they are there already.
    mutating func encodeIDs(of view: IndicatorView) {
        guard baseView !== view else { return }
        baseIDs.removeAll()
        baseEntryStarts.removeAll(keepingCapacity: true)
        view.forEachTyper { id, escapes in
            if !baseEntryStarts.isEmpty {
                baseEntryStarts.append(baseIDs.count)
                baseIDs.append(UInt8(ascii: ","))
            } else {
                baseEntryStarts.append(0)
            }
            baseIDs.jsonIdentifier(bytes: id, escapes: escapes)
        }
        baseEntryStarts.append(baseIDs.count)
        baseView = view
    }

    /// `{"event":"typing","at":…,"conv":…,"user":…,"state":…,"reason":…}`
    func encode(_ change: Event.Typing, into out: inout OutputBuffer) {
        out.append("{\"event\":\"typing\",\"at\":")
        out.appendDecimal(change.at)
        out.append(",\"conv\":")
        out.jsonIdentifier(change.conv)
        out.append(",\"user\":")
        out.jsonIdentifier(change.user)
        out.append(",\"state\":")
        out.jsonString(change.state.rawValue)
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

    /// `{"event":"state","at":…,"id":…,"conv":…,"members":[…],"typing":[…]}`
    func encode(_ state: Event.State, into out: inout OutputBuffer) {
        out.append("{\"event\":\"state\",\"at\":")
        out.appendDecimal(state.at)
        if let id = state.id {
            out.append(",\"id\":")
            out.jsonRequestID(id)
        }
        out.append(",\"conv\":")
        out.jsonIdentifier(state.conv)
        out.append(",\"members\":")
        out.jsonArray(state.members)
        out.append(",\"typing\":")
        out.jsonArray(state.typing)
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
            (",\"typing\":", stats.typing), (",\"events\":", stats.events),
        ] {
            out.append(key)
            out.appendDecimal(value)
        }
        out.append("}\n")
    }
}

/// JSON strings, as the protocol writes them: `"` and `\` escaped, U+0000–U+001F as
/// `\b \f \n \r \t` or `\u00xx` (lowercase hex); every other character as UTF-8,
/// `/` unescaped.
extension OutputBuffer {
    /// Appends UTF-8 bytes as a quoted, escaped JSON string.
    mutating func jsonString(_ text: UnsafeRawBufferPointer) {
        if !OutputBuffer.needsEscaping(text) {
            appendQuoted(text)
            return
        }
        append(UInt8(ascii: "\""))
        var runStart = 0
        for index in 0..<text.count {
            let byte = text[index]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C { continue }
            append(UnsafeRawBufferPointer(rebasing: text[runStart..<index]))
            jsonEscape(byte)
            runStart = index + 1
        }
        append(UnsafeRawBufferPointer(rebasing: text[runStart...]))
        append(UInt8(ascii: "\""))
    }

    /// Appends a quoted, escaped JSON string.
    mutating func jsonString(_ text: String) {
        var text = text
        text.withUTF8 { jsonString(UnsafeRawBufferPointer($0)) }
    }

    /// Appends an id as a quoted JSON string, copying it as is when no byte needs
    /// an escape (the id knows).
    @inline(__always)
    mutating func jsonIdentifier(_ id: Identifier) {
        let escapes = id.needsEscaping
        id.withUnsafeBytes { jsonIdentifier(bytes: $0, escapes: escapes) }
    }

    /// Appends id bytes as a quoted JSON string; `escapes` says whether any byte
    /// needs an escape (if not, they are copied as they are).
    @inline(__always)
    mutating func jsonIdentifier(bytes: UnsafeRawBufferPointer, escapes: Bool) {
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

    /// Appends the escape sequence of one byte that needs one.
    mutating func jsonEscape(_ byte: UInt8) {
        append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: append(UInt8(ascii: "\""))
        case 0x5C: append(UInt8(ascii: "\\"))
        case 0x08: append(UInt8(ascii: "b"))
        case 0x0C: append(UInt8(ascii: "f"))
        case 0x0A: append(UInt8(ascii: "n"))
        case 0x0D: append(UInt8(ascii: "r"))
        case 0x09: append(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            append("u00")
            hex.withUTF8Buffer { digits in
                append(digits[Int(byte >> 4)])
                append(digits[Int(byte & 0x0F)])
            }
        }
    }

    /// True when some byte is below 0x20, `"` or `\`; eight bytes at a time.
    @inline(__always)
    static func needsEscaping(_ text: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= text.count {
            if Identifier.needsEscape(text.loadUnaligned(fromByteOffset: index, as: UInt64.self)) { return true }
            index += 8
        }
        while index < text.count {
            let byte = text[index]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C { return true }
            index += 1
        }
        return false
    }
}
