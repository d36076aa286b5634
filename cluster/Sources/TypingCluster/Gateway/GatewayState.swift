import TypingPartitioning
import TypingProtocol

/// One screen of a viewer: a conversation, a thread of it, or its line in a view
/// (`"view":"list"`, the chat list); in the main screen, or in the viewer's side
/// pane (`"pane":"side"`, Protocol.md#side-panes), which is a screen of its own even
/// when it shows the thread the main screen shows.
public struct Screen: Hashable, Sendable, Comparable {
    public var conv: String
    public var thread: String?
    public var view: String?
    /// The event's `pane`: nil for the main screen, `side` for the side pane.
    public var pane: String?

    public init(conv: String, thread: String? = nil, view: String? = nil, pane: String? = nil) {
        self.conv = conv
        self.thread = thread
        self.view = view
        self.pane = pane
    }

    public static func < (a: Screen, b: Screen) -> Bool {
        a.sortKey.lexicographicallyPrecedes(b.sortKey)
    }

    /// The fields in order, an absent one before every present one.
    var sortKey: [String] {
        [conv, thread.map { "1" + $0 } ?? "0", view.map { "1" + $0 } ?? "0", pane.map { "1" + $0 } ?? "0"]
    }

    /// The screen of an indicator or announce event; nil without a string `conv`.
    init?(event: JSONValue) {
        guard let conv = event["conv"]?.string else { return nil }
        self.conv = conv
        thread = Screen.field(event["thread"])
        view = Screen.field(event["view"])
        pane = Screen.field(event["pane"])
    }

    static func field(_ value: JSONValue?) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let other?: return String(decoding: other.bytes, as: UTF8.self)
        }
    }
}

/// Where a shard's message or answer stands: its owner's epoch, then the last
/// stream sequence applied. Later is greater.
public struct Stamp: Comparable, Hashable, Sendable {
    public var epoch: Int
    public var seq: Int

    public init(epoch: Int, seq: Int) {
        self.epoch = epoch
        self.seq = seq
    }

    public static let zero = Stamp(epoch: 0, seq: 0)

    public static func < (a: Stamp, b: Stamp) -> Bool { (a.epoch, a.seq) < (b.epoch, b.seq) }
}

/// A change of one viewer's screen, or an announcement for it.
public struct GatewayUpdate: Sendable {
    /// Where it came from.
    public enum Source: Sendable {
        /// A shard's message: an event as published.
        case message
        /// A resync answer: the screen's state at the answer's stamp (not an event).
        case resync
    }

    /// What it is.
    public enum Kind: Sendable {
        /// An `indicator` event: what the screen shows now.
        case indicator
        /// An `announce` event (Protocol.md#announcements-for-screen-readers): the
        /// screen's settled sentence, for the viewer's screen reader. It changes
        /// nothing the screen shows; it comes only from a message.
        case announce
    }

    public var viewer: String
    public var screen: Screen
    /// The event (one JSON line): for an indicator, what the screen now shows; nil:
    /// cleared (a resync answer that does not list the screen: nobody is typing there).
    public var line: [UInt8]?
    public var source: Source
    public var kind: Kind = .indicator
}

/// A shard's answer to a resync request (`typingd.resync`, body `{"viewer":ID}`).
public struct ResyncAnswer: Sendable {
    public var partition: Int
    public var stamp: Stamp
    /// The last non-empty indicator per screen the partition published for the viewer.
    var indicators: [JSONValue]
    /// The number of viewer buckets the shard publishes by, when it said.
    public var viewerBuckets: Int?

    /// An answer from its JSON body; nil when the body is not one.
    public init?(body: [UInt8]) {
        guard let value = JSONValue.parse(body), let partition = value["partition"]?.int,
            let epoch = value["epoch"]?.int, let seq = value["seq"]?.int,
            let indicators = value["indicators"]?.array
        else { return nil }
        self.partition = partition
        stamp = Stamp(epoch: epoch, seq: seq)
        self.indicators = indicators
        viewerBuckets = value["viewer_buckets"]?.int
    }
}

/// The gateway's rules, without any I/O: each viewer's current indicator per
/// screen, kept right through lost messages, takeovers and resyncs.
///
/// - The highest epoch seen per partition is kept; a message of a lower one (a
///   deposed owner's late events) is dropped. A higher one (a takeover) asks for
///   a resync.
/// - A resync answer replaces the viewer's screens of its partition (a screen not
///   listed shows nobody), except those a later message already set (answers and
///   messages come on different subscriptions, in either order).
/// - After an answer, a message it covers (same partition, stamp at or below the
///   answer's) is dropped for that viewer: the answer already holds it or later.
///   An answer holds no announcements: a covered one is still delivered when the
///   screen shows its sentence now (else it is stale: dropped).
/// - An announcement (`announce`) is handed on, not kept: it changes no screen.
public struct GatewayState: Sendable {
    /// What a message did.
    public struct Outcome: Sendable {
        /// The screens it set, in order.
        public var updates: [GatewayUpdate] = []
        /// A new epoch for a partition (a takeover): a resync is due.
        public var wantsResync = false
        /// The epoch seen before, when `wantsResync`.
        public var previousEpoch: Int?
        public var epoch: Int?
        public var partition: Int?
    }

    /// Counters, as the gateway's summary shows them.
    public struct Counts: Sendable, Equatable {
        public var messages = 0
        public var indicators = 0
        public var announcements = 0
        public var staleEpoch = 0
        public var covered = 0
        public var slowConsumer = 0
        public var reconnects = 0
        public var newEpochs = 0
        public var resyncs = 0
        public var resyncRequests = 0
        public var resyncRetries = 0
        public var badLines = 0
    }

    struct Shown: Sendable {
        var line: [UInt8]
        var partition: Int
        var stamp: Stamp
    }

    struct FloorKey: Hashable, Sendable {
        var viewer: String
        var partition: Int
    }

    /// Partitions (to tell a message without headers where it belongs).
    public let partitions: Int
    /// Whether every viewer heard of is kept (else only ``viewers``).
    public let allViewers: Bool
    /// The viewers served.
    public private(set) var viewers: Set<String>
    var screens: [String: [Screen: Shown]] = [:]
    /// Partition → highest epoch seen.
    public private(set) var epochs: [Int: Int] = [:]
    var floors: [FloorKey: Stamp] = [:]
    public var counts = Counts()

    public init(viewers: some Sequence<String>, allViewers: Bool, partitions: Int) {
        self.viewers = Set(viewers)
        self.allViewers = allViewers
        self.partitions = max(1, partitions)
        for viewer in self.viewers { screens[viewer] = [:] }
    }

    /// The headers' stamp and partition; nil when any is missing or not a number.
    static func stamp(of headers: [String: String]) -> (Int, Stamp)? {
        guard let epochText = headers[Names.Header.epoch], let epoch = Int(epochText),
            let partitionText = headers[Names.Header.partition], let partition = Int(partitionText),
            let seqText = headers[Names.Header.sequence], let seq = Int(seqText)
        else { return nil }
        return (partition, Stamp(epoch: epoch, seq: seq))
    }

    /// Takes a shard's message: its body is event lines; the indicators of the
    /// gateway's viewers are applied.
    public mutating func take(body: [UInt8], headers: [String: String]) -> Outcome {
        counts.messages += 1
        var outcome = Outcome()
        let stamped = Self.stamp(of: headers)
        if let (p, stamp) = stamped {
            outcome.partition = p
            outcome.epoch = stamp.epoch
            let known = epochs[p]
            if let known, stamp.epoch < known {
                counts.staleEpoch += 1
                return outcome
            }
            if known.map({ stamp.epoch > $0 }) ?? true {
                epochs[p] = stamp.epoch
                if let known {
                    counts.newEpochs += 1
                    outcome.wantsResync = true
                    outcome.previousEpoch = known
                }
            }
        }
        for rawLine in body.split(separator: 0x0A, omittingEmptySubsequences: true) {
            if rawLine.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            guard let event = JSONValue.parse(rawLine) else { counts.badLines += 1; continue }
            let kind: GatewayUpdate.Kind
            switch event["event"]?.string {
            case "indicator"?: kind = .indicator
            case "announce"?: kind = .announce
            default: continue
            }
            guard let viewer = event["viewer"]?.string, let screen = Screen(event: event) else {
                counts.badLines += 1
                continue
            }
            if !viewers.contains(viewer) {
                if !allViewers { continue }
                viewers.insert(viewer)
                screens[viewer] = [:]
            }
            if let (p, stamp) = stamped, let floor = floors[FloorKey(viewer: viewer, partition: p)], stamp <= floor,
                kind == .indicator || !shows(viewer, screen, textOf: event)
            {
                counts.covered += 1 // a resync already gave this or later
                continue
            }
            if kind == .announce {
                counts.announcements += 1
                outcome.updates.append(
                    GatewayUpdate(
                        viewer: viewer, screen: screen, line: Array(rawLine), source: .message,
                        kind: .announce))
                continue
            }
            let partition = stamped?.0 ?? TypingPartitioning.Partition.of(screen.conv, among: partitions)
            let line = Array(rawLine)
            screens[viewer, default: [:]][screen] = Shown(line: line, partition: partition, stamp: stamped?.1 ?? .zero)
            counts.indicators += 1
            outcome.updates.append(GatewayUpdate(viewer: viewer, screen: screen, line: line, source: .message))
        }
        return outcome
    }

    /// Whether `viewer`'s `screen` shows the text of `event` now.
    func shows(_ viewer: String, _ screen: Screen, textOf event: JSONValue) -> Bool {
        guard let line = screens[viewer]?[screen]?.line, let text = event["text"] else { return false }
        return JSONValue.parse(line)?["text"] == text
    }

    /// Applies `answer`, the best one taken for `viewer` from its partition; the
    /// screens it changed, or nil when it was not taken (a deposed owner's: an
    /// epoch below the one known; ask again).
    public mutating func take(answer: ResyncAnswer, for viewer: String) -> [GatewayUpdate]? {
        let p = answer.partition
        if let known = epochs[p], answer.stamp.epoch < known { return nil }
        epochs[p] = answer.stamp.epoch
        let stamp = answer.stamp
        var current = screens[viewer] ?? [:]
        if !viewers.contains(viewer) { viewers.insert(viewer) }
        var listed: [Screen: JSONValue] = [:]
        var order: [Screen] = []
        for event in answer.indicators {
            guard let screen = Screen(event: event) else { continue }
            if listed.updateValue(event, forKey: screen) == nil { order.append(screen) }
        }
        var updates: [GatewayUpdate] = []
        // The answer is the state at `stamp`; a screen set by a message after it
        // (queued apart from the answer, and taken first) keeps that newer state.
        for (screen, shown) in current.sorted(by: { $0.key < $1.key })
        where shown.partition == p && listed[screen] == nil && shown.stamp <= stamp {
            current[screen] = nil // not listed: nothing shown now
            updates.append(GatewayUpdate(viewer: viewer, screen: screen, line: nil, source: .resync))
        }
        for screen in order {
            guard let event = listed[screen] else { continue }
            if let shown = current[screen], shown.stamp > stamp { continue }
            let line = event.bytes
            current[screen] = Shown(line: line, partition: p, stamp: stamp)
            updates.append(GatewayUpdate(viewer: viewer, screen: screen, line: line, source: .resync))
        }
        screens[viewer] = current
        let key = FloorKey(viewer: viewer, partition: p)
        floors[key] = max(stamp, floors[key] ?? .zero)
        return updates
    }

    /// A viewer's screen at the end.
    public struct Final: Sendable {
        public var viewer: String
        public var screen: Screen
        /// The last indicator event applied, when it shows someone typing; nil
        /// when it shows nobody.
        public var indicator: [UInt8]?

        /// `{"viewer","conv","thread","view","pane","indicator"}` (a `--finals` line).
        public var jsonLine: [UInt8] {
            var out: [UInt8] = Array("{\"viewer\": ".utf8)
            JSONValue.writeString(viewer, to: &out)
            out += Array(", \"conv\": ".utf8)
            JSONValue.writeString(screen.conv, to: &out)
            out += Array(", \"thread\": ".utf8)
            if let thread = screen.thread { JSONValue.writeString(thread, to: &out) } else { out += Array("null".utf8) }
            out += Array(", \"view\": ".utf8)
            if let view = screen.view { JSONValue.writeString(view, to: &out) } else { out += Array("null".utf8) }
            out += Array(", \"pane\": ".utf8)
            if let pane = screen.pane { JSONValue.writeString(pane, to: &out) } else { out += Array("null".utf8) }
            out += Array(", \"indicator\": ".utf8)
            out += indicator ?? Array("null".utf8)
            out.append(UInt8(ascii: "}"))
            return out
        }
    }

    /// Every viewer's screens, sorted by viewer then screen.
    public var finals: [Final] {
        var result: [Final] = []
        for viewer in viewers.sorted() {
            for (screen, shown) in (screens[viewer] ?? [:]).sorted(by: { $0.key < $1.key }) {
                let typing = JSONValue.parse(shown.line)?["typing"]?.isTruthy ?? false
                result.append(Final(viewer: viewer, screen: screen, indicator: typing ? shown.line : nil))
            }
        }
        return result
    }

    /// What `viewer` sees on `screen` now: the indicator line, or nil.
    public func current(_ viewer: String, _ screen: Screen) -> [UInt8]? {
        screens[viewer]?[screen]?.line
    }
}
