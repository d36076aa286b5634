import TypingCore

/// Encodes events into bytes, one compact JSON object per line, keys in the
/// protocol's order. It is the ``TypingCore/EventSink`` the daemon hands the engine.
///
/// Indicator events of one change share their view (every member who is not typing
/// sees the same one), so the encoder keeps the encoded `"typing":…,"text":…` tail of
/// the last view and copies it for the next viewer instead of encoding it again. A
/// typer's view is derived from that shared one: its id list is copied from the
/// shared view's encoded ids, leaving one entry out.
public struct EventEncoder: EventSink {
    /// The encoded events not yet taken by the caller.
    public var output = JSONWriter()

    /// The view whose encoded tail is in `tail`.
    var cachedView: IndicatorView?
    /// `"typing":[…],"text":"…"}` and the LF, for `cachedView`.
    let tail = JSONWriter(capacity: 256)
    /// The own view whose encoded ids are in `baseIDs`.
    var baseView: IndicatorView?
    /// The encoded ids of `baseView`, each after the first with its leading comma.
    let baseIDs = JSONWriter(capacity: 1024)
    /// Where each entry of `baseView` starts in `baseIDs`, then the end.
    var baseEntryStarts: [Int] = []

    /// Where full chunks of output go in the middle of a step, if anywhere: one
    /// command can produce megabytes (a change in a room of thousands where many
    /// type), and this keeps the buffer bounded. The handler must take all the
    /// bytes; nil leaves everything in the buffer.
    public var spill: ((UnsafeRawBufferPointer) -> Void)?
    /// The buffered output that makes ``emit(_:)`` spill.
    public var spillThreshold = 1 << 20

    /// An empty encoder.
    public init() {}

    /// Encodes one event and its LF.
    public mutating func emit(_ event: Event) {
        if let spill, output.buffer.count >= spillThreshold {
            spill(output.buffer.bytes)
            output.buffer.removeAll()
        }
        switch event {
        case .indicator(let indicator): encode(indicator)
        case .typing(let change): encode(change)
        case .ok(let ack): encode(ack)
        case .error(let report): encode(report)
        case .state(let state): encode(state)
        case .stats(let stats): encode(stats)
        }
    }

    /// `{"event":"indicator","at":…,"conv":…,"viewer":…,"typing":[…],"text":…}`
    mutating func encode(_ indicator: Indicator) {
        output.raw("{\"event\":\"indicator\",\"at\":")
        output.integer(indicator.at)
        output.raw(",\"conv\":")
        output.identifier(indicator.conv)
        output.raw(",\"viewer\":")
        output.identifier(indicator.viewer)
        let view = indicator.view
        if let base = view.base {
            // A typer's view: the base's encoded ids without the omitted entry.
            encodeIDs(of: base)
            output.raw(",\"typing\":[")
            let ids = baseIDs.buffer.bytes
            let start = baseEntryStarts[view.omitted], end = baseEntryStarts[view.omitted + 1]
            if view.omitted == 0 {
                if end < ids.count { output.raw(UnsafeRawBufferPointer(rebasing: ids[(end + 1)...])) }
            } else {
                output.raw(UnsafeRawBufferPointer(rebasing: ids[0..<start]))
                output.raw(UnsafeRawBufferPointer(rebasing: ids[end...]))
            }
            output.raw("],\"text\":")
            view.withTextBytes { output.string(bytes: $0) }
            output.raw("}\n")
            return
        }
        if cachedView !== view {
            encodeIDs(of: view)
            tail.buffer.removeAll()
            tail.raw(",\"typing\":[")
            tail.raw(baseIDs.buffer.bytes)
            tail.raw("],\"text\":")
            view.withTextBytes { tail.string(bytes: $0) }
            tail.raw("}\n")
            cachedView = view
        }
        output.raw(tail.buffer.bytes)
    }

    /// Encodes the ids of own view `view` into `baseIDs` (`"a"`, `,"b"`, … back to
    /// back) with where each entry starts, unless they are there already.
    mutating func encodeIDs(of view: IndicatorView) {
        guard baseView !== view else { return }
        baseIDs.buffer.removeAll()
        baseEntryStarts.removeAll(keepingCapacity: true)
        view.forEachTyper { id, escapes in
            if !baseEntryStarts.isEmpty {
                baseEntryStarts.append(baseIDs.buffer.count)
                baseIDs.buffer.append(UInt8(ascii: ","))
            } else {
                baseEntryStarts.append(0)
            }
            baseIDs.identifier(bytes: id, escapes: escapes)
        }
        baseEntryStarts.append(baseIDs.buffer.count)
        baseView = view
    }

    /// `{"event":"typing","at":…,"conv":…,"user":…,"state":…,"reason":…}`
    mutating func encode(_ change: TypingChange) {
        output.raw("{\"event\":\"typing\",\"at\":")
        output.integer(change.at)
        output.raw(",\"conv\":")
        output.identifier(change.conv)
        output.raw(",\"user\":")
        output.identifier(change.user)
        output.raw(",\"state\":")
        output.string(change.state.rawValue)
        if let reason = change.reason {
            output.raw(",\"reason\":")
            output.string(reason.rawValue)
        }
        output.raw("}\n")
    }

    /// `{"event":"ok","line":…,"id":…}`
    mutating func encode(_ ack: Acknowledgement) {
        output.raw("{\"event\":\"ok\",\"line\":")
        output.integer(ack.line)
        output.raw(",\"id\":")
        output.requestID(ack.id)
        output.raw("}\n")
    }

    /// `{"event":"error","line":…,"id":…,"code":…,"message":…,"field":…,"column":…}`
    mutating func encode(_ report: ErrorReport) {
        output.raw("{\"event\":\"error\",\"line\":")
        output.integer(report.line)
        output.optionalID(report.id)
        output.raw(",\"code\":")
        output.string(report.code.rawValue)
        output.raw(",\"message\":")
        output.string(report.message)
        if let field = report.field {
            output.raw(",\"field\":")
            output.string(field)
        }
        if let column = report.column { output.integer(",\"column\":", column) }
        output.raw("}\n")
    }

    /// `{"event":"state","at":…,"id":…,"conv":…,"members":[…],"typing":[…]}`
    mutating func encode(_ state: StateReply) {
        output.raw("{\"event\":\"state\",\"at\":")
        output.integer(state.at)
        output.optionalID(state.id)
        output.raw(",\"conv\":")
        output.identifier(state.conv)
        output.raw(",\"members\":")
        output.array(state.members)
        output.raw(",\"typing\":")
        output.array(state.typing)
        output.raw("}\n")
    }

    /// `{"event":"stats","at":…,"id":…,"lines":…,…,"events":…}`
    mutating func encode(_ stats: StatsReply) {
        output.raw("{\"event\":\"stats\",\"at\":")
        output.integer(stats.at)
        output.optionalID(stats.id)
        output.integer(",\"lines\":", stats.lines)
        output.integer(",\"commands\":", stats.commands)
        output.integer(",\"errors\":", stats.errors)
        output.integer(",\"conversations\":", stats.conversations)
        output.integer(",\"members\":", stats.members)
        output.integer(",\"typing\":", stats.typing)
        output.integer(",\"events\":", stats.events)
        output.raw("}\n")
    }
}
