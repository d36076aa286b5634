import ArgumentParser
import TypingdOptions
#if canImport(Glibc)
import Glibc
#endif

/// The cluster's settings, each with its type, range and default in one table
/// (``ClusterSettings/table``): the defaults of every role's options.
///
/// A value comes, first found wins, from the option given, the environment
/// (`PARTITIONS=8`), the configuration file (`--config FILE`, lines
/// `NAME=VALUE` as a shell reads them, `export` allowed, the last one wins), the
/// default.
public struct ClusterSettings: Sendable, Equatable {
    /// The first of the 3 local nodes' client ports (routes +2000, monitoring +4000).
    public var portBase = 14222
    /// Partitions: the same for the router, every shard and gateway.
    public var partitions = 4
    /// typingd's options for every shard, as words: read by typingd's own option
    /// parser, so a bad one (`--quiet-above 0`, an unknown option) stops every role
    /// with typingd's message. Its phrase tables are loaded only by the shards
    /// (their paths are from a shard's working directory).
    public var typingdOptions = "--phrases phrases --list-style group"
    /// A shard stores a snapshot every N messages (0: never).
    public var snapshotEvery = 1000
    /// The owner lease's time to live, seconds. An owner survives renewals failing
    /// for 2/3 of it (its last good renewal was sent up to TTL/3 before), and a
    /// nats-server 2.9 election after the KV leader's node stopped took 5.5-8.8 s
    /// on a local 3-node cluster (6 runs): 15 s tolerates 10 s. A takeover after
    /// an owner's death waits up to this long.
    public var leaseTTL = 15.0
    /// The owner's tick, ms (0: none).
    public var tickMs = 100
    /// The command stream's storage.
    public var storage = "file"
    /// The command stream's replicas.
    public var replicas = 3
    /// Indicator subjects: `typingd.viewers.B`, B = FNV-1a(viewer) mod this.
    public var viewerBuckets = 16
    /// Ping interval of every connection, ms: a dead server is noticed within two.
    public var pingMs = 1000

    /// The defaults.
    public init() {}

    /// A setting: its name, what it wants, and how it is read and written.
    public struct Setting: Sendable {
        public let name: String
        public let wanted: String
        let read: @Sendable (inout ClusterSettings, String) -> Bool
        let show: @Sendable (ClusterSettings) -> String
        /// Why a value does not read, when there is more to say than ``wanted``.
        var why: @Sendable (String) -> String? = { _ in nil }
    }

    /// What typingd says of `text` as its options (the shard's: on the manual
    /// clock), or nil when typingd takes them.
    public static func typingdOptionsProblem(_ text: String) -> String? {
        do {
            _ = try SessionOptions.parse(["--clock", "manual"] + SessionOptions.words(text))
            return nil
        } catch {
            return SessionOptions.message(for: error)
        }
    }

    /// Every setting.
    public static let table: [Setting] = [
        int("PORT_BASE", \.portBase, 1...(65535 - 4002)),
        int("PARTITIONS", \.partitions, 1...4096),
        Setting(
            name: "TYPINGD_OPTIONS", wanted: "typingd's options",
            read: { settings, text in
                guard typingdOptionsProblem(text) == nil else { return false }
                settings.typingdOptions = text
                return true
            }, show: { $0.typingdOptions }, why: typingdOptionsProblem),
        int("SNAPSHOT_EVERY", \.snapshotEvery, 0...1_000_000_000),
        Setting(
            name: "LEASE_TTL", wanted: "a number of seconds from 0.1 to 86400",
            read: { settings, text in
                guard let value = Double(text.trimmingSpaces), value.isFinite, (0.1...86400).contains(value) else {
                    return false
                }
                settings.leaseTTL = value
                return true
            }, show: { String($0.leaseTTL) }),
        int("TICK_MS", \.tickMs, 0...86_400_000),
        Setting(
            name: "STORAGE", wanted: "file or memory",
            read: { settings, text in
                let value = text.trimmingSpaces
                guard value == "file" || value == "memory" else { return false }
                settings.storage = value
                return true
            }, show: { $0.storage }),
        int("REPLICAS", \.replicas, 1...5),
        int("VIEWER_BUCKETS", \.viewerBuckets, 1...4096),
        int("PING_MS", \.pingMs, 100...60_000)
    ]

    static func int(
        _ name: String, _ path: WritableKeyPath<ClusterSettings, Int> & Sendable,
        _ range: ClosedRange<Int>
    ) -> Setting {
        Setting(
            name: name, wanted: "a whole number from \(range.lowerBound) to \(range.upperBound)",
            read: { settings, text in
                let trimmed = text.trimmingSpaces
                guard !trimmed.isEmpty,
                    trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
                        || (trimmed.first == "-" && trimmed.utf8.dropFirst().allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
                            && trimmed.count > 1),
                    let value = Int(trimmed), range.contains(value)
                else { return false }
                settings[keyPath: path] = value
                return true
            }, show: { String($0[keyPath: path]) })
    }

    /// A setting that does not read: which, where, and what it wants.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Sets `name` from `text`, or says why not (`source` names where it came from).
    public mutating func set(_ name: String, _ text: String, from source: String) throws(Failure) {
        guard let setting = Self.table.first(where: { $0.name == name }) else {
            throw Failure(description: "\(source): " + Self.unknown(name))
        }
        guard setting.read(&self, text) else {
            let why = setting.why(text).map { " (\($0))" } ?? ""
            throw Failure(description: "\(source): \(name)=\(text.debugDescription) is not \(setting.wanted)\(why)")
        }
    }

    /// The settings of `fileText` (lines `NAME=VALUE`, `export NAME=VALUE`, `#`
    /// comments; VALUE in shell quoting), then of `environment` where set and not
    /// empty. A line that is not `NAME=VALUE`, or names no setting of the table, is
    /// an error naming the file and line (with the setting it may have meant): a
    /// misspelt setting would otherwise leave its default in force unseen.
    public static func load(fileText: String?, fileName: String, environment: [String: String]) throws(Failure)
        -> ClusterSettings
    {
        var settings = ClusterSettings()
        let names = Set(table.map(\.name))
        if let fileText {
            for (index, rawLine) in fileText.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                var line = Substring(rawLine.trimmingSpaces)
                if line.isEmpty || line.hasPrefix("#") { continue }
                if line.hasPrefix("export ") || line.hasPrefix("export\t") {
                    line = Substring(line.dropFirst(7).trimmingSpaces)
                }
                let place = "\(fileName):\(index + 1)"
                guard let equals = line.firstIndex(of: "="), equals > line.startIndex else {
                    throw Failure(
                        description: "\(place): \(String(line.prefix(60)).debugDescription) is not NAME=VALUE "
                            + "(a setting, a # comment or a blank line; the settings: \(table.map(\.name).joined(separator: ", ")))"
                    )
                }
                let name = String(line[..<equals])
                guard names.contains(name) else { throw Failure(description: "\(place): " + unknown(name)) }
                let value = try unquote(String(line[line.index(after: equals)...]), at: "\(fileName):\(index + 1)")
                try settings.set(name, value, from: "\(fileName):\(index + 1)")
            }
        }
        for setting in table {
            if let value = environment[setting.name], !value.isEmpty {
                try settings.set(setting.name, value, from: "the environment")
            }
        }
        return settings
    }

    /// What to say of `name`, no setting: the setting it may have meant (at most a
    /// third of its letters off), else every setting.
    static func unknown(_ name: String) -> String {
        let shown = String(name.prefix(60)).debugDescription
        let near = table.map { ($0.name, editDistance(name.uppercased(), $0.name)) }.min { $0.1 < $1.1 }
        if let (nearest, distance) = near, distance <= max(1, nearest.count / 3) {
            return "no setting \(shown): did you mean \(nearest)?"
        }
        return "no setting \(shown) (the settings: \(table.map(\.name).joined(separator: ", ")))"
    }

    /// Levenshtein's distance between `a` and `b`, by characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a), y = Array(b)
        if x.isEmpty { return y.count }
        var row = Array(0...y.count)
        for i in 1...x.count {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: y.count, by: 1) {
                let above = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (x[i - 1] == y[j - 1] ? 0 : 1))
                previous = above
            }
        }
        return row[y.count]
    }

    /// A shell word's value: quotes removed (`"…"` with backslash escapes, `'…'`
    /// literal), an unquoted `#` after space starting a comment.
    static func unquote(_ text: String, at place: String) throws(Failure) -> String {
        var result = ""
        var iterator = Array(text).makeIterator()
        var previousWasSpace = true
        while let character = iterator.next() {
            switch character {
            case "'":
                var closed = false
                while let next = iterator.next() {
                    if next == "'" { closed = true; break }
                    result.append(next)
                }
                if !closed { throw Failure(description: "\(place): a ' is not closed") }
            case "\"":
                var closed = false
                while let next = iterator.next() {
                    if next == "\"" { closed = true; break }
                    if next == "\\", let escaped = iterator.next() { result.append(escaped); continue }
                    result.append(next)
                }
                if !closed { throw Failure(description: "\(place): a \" is not closed") }
            case "\\":
                if let escaped = iterator.next() { result.append(escaped) }
            case "#" where previousWasSpace:
                return result.trimmingSpaces
            default:
                result.append(character)
            }
            previousWasSpace = character == " " || character == "\t"
        }
        return result.trimmingSpaces
    }

    /// The 3 local nodes' client URLs: 127.0.0.1 at ``portBase`` + 0, 1, 2.
    public var localServers: [String] {
        (0..<3).map { "nats://127.0.0.1:\(portBase + $0)" }
    }

    /// Each setting as `NAME=VALUE`, for `--help` and `ctl settings`.
    public var lines: [String] {
        Self.table.map { "\($0.name)=\($0.show(self))" }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let text = String(self)
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(text[first...last])
    }
}
