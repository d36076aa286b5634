import TypingdOptions
import ArgumentParser
import CJansson
import Glibc
import TypingCore
import TypingProtocol

/// The options a transcript's `NAME.args` may hold: those of `typingd --clock
/// manual`, the session's and the threads' (which change nothing in the output);
/// `--record` and the others of the daemon alone are refused as unknown.
struct TranscriptOptions: ParsableArguments {
    @OptionGroup var session: SessionOptions
    @OptionGroup var threading: ThreadOptions
}

/// Runs a transcript in this process, exactly as `typingd` runs it as a process: the
/// same options, the same session, the same formats. A record (made by
/// `typingd --record`) runs as `typingd replay` plays it.
package enum TranscriptRun {
    /// The output of `input` under the options `words` (an `.args` file's words, nil
    /// without one; `--clock manual` unless they name a clock). Stops early when
    /// `stop` says so (a signal).
    /// Relative `--phrases` paths are taken from `folder` (the transcript's).
    package static func output(
        of input: [UInt8], words: [String]?, folder: String? = nil, argumentsFile: String? = nil,
        checksInvariants: Bool,
        stop: @escaping @Sendable () -> Bool = { false }
    ) throws(CheckFailure) -> [UInt8] {
        let badOptions = "bad options" + (argumentsFile.map { " in \(TextFormat.path($0))" } ?? "") + ": "
        if input.withUnsafeBytes({ RecordFormat.isRecord($0) }) {
            guard words == nil else {
                throw CheckFailure("the input is a record, which carries its own options: remove the .args file")
            }
            return try replay(input, checksInvariants: checksInvariants, stop: stop)
        }
        var words = words ?? []
        if !words.contains(where: { $0 == "--clock" || $0.hasPrefix("--clock=") }) {
            words = ["--clock", "manual"] + words
        }
        let options: TranscriptOptions
        do {
            options = try TranscriptOptions.parse(words)
        } catch {
            throw CheckFailure(
                badOptions + TranscriptOptions.message(for: error).split(separator: "\n").joined(separator: "; "))
        }
        var configuration: SessionConfiguration
        do {
            configuration = try options.session.configuration(relativeTo: folder)
        } catch {
            throw CheckFailure(badOptions + "\(error)")
        }
        configuration.checksInvariants = checksInvariants
        switch options.session.format {
        case .json: return run(input, configuration, format: JSONFormat(), stop: stop)
        case .text: return run(input, configuration, format: TextFormat(), stop: stop)
        }
    }

    /// Feeds `input` whole, ends it, and drains. With `--clock real` the clock stands
    /// at 0 for every line (so the output is the same every time), and the drain
    /// fires the remaining timeouts at their deadlines.
    static func run<Format: EventFormat & ~Copyable>(
        _ input: [UInt8], _ configuration: SessionConfiguration,
        format: consuming Format,
        stop: @escaping @Sendable () -> Bool
    ) -> [UInt8] {
        var session = Session(configuration: configuration, format: format, sink: PausingArray(stop: stop))
        _ = input.withUnsafeBytes { session.feed($0) }
        if stop() { return session.sink.bytes }
        session.finish()
        if configuration.clock == .real && configuration.drain {
            while let deadline = session.nextDeadline() { session.advance(to: deadline) }
        }
        session.flush()
        return session.sink.bytes
    }

    /// Plays the record `input` (see ``RecordFormat``).
    static func replay(
        _ input: [UInt8], checksInvariants: Bool,
        stop: @escaping @Sendable () -> Bool
    ) throws(CheckFailure) -> [UInt8] {
        var preamble = RecordPreamble()
        var start: Int?
        do throws(RecordPlayer.BadRecord) {
            start = try input.withUnsafeBytes { bytes in
                Result { () throws(RecordPlayer.BadRecord) in try preamble.feed(bytes) }
            }.get()
            if start == nil {
                // The preamble runs to the end of the input (a session killed before
                // it read a line): the end of input closes it, and nothing is left
                // to play (the offset it returns is into the empty chunk, not `input`).
                _ = try preamble.feed(UnsafeRawBufferPointer(start: nil, count: 0))
                start = input.count
            }
        } catch {
            throw CheckFailure("the record is malformed: \(error)")
        }
        let options = try RecordOptions.parse(preamble)
        var configuration: SessionConfiguration
        do {
            configuration = try options.configuration(recorded: preamble.tables)
        } catch {
            throw CheckFailure("the record's header names a bad phrase table: \(error)")
        }
        configuration.checksInvariants = checksInvariants
        let parts = [preamble.carried[...], input[(start ?? input.count)...]]
        switch options.format {
        case .json: return try replay(parts, configuration, after: preamble, format: JSONFormat(), stop: stop)
        case .text: return try replay(parts, configuration, after: preamble, format: TextFormat(), stop: stop)
        }
    }

    /// Plays the record lines in `parts`, which follow `preamble` (the header and the
    /// table lines).
    static func replay<Format: EventFormat & ~Copyable>(
        _ parts: [ArraySlice<UInt8>], _ configuration: SessionConfiguration,
        after preamble: RecordPreamble, format: consuming Format,
        stop: @escaping @Sendable () -> Bool
    ) throws(CheckFailure) -> [UInt8] {
        var session = Session(configuration: configuration, format: format, sink: PausingArray(stop: stop))
        var player = RecordPlayer(maxLineBytes: configuration.maxLineBytes, after: preamble)
        var played: Result<Void, RecordPlayer.Failure<Never>> = .success(())
        for part in parts {
            played = part.withUnsafeBytes { bytes in
                do throws(RecordPlayer.Failure<Never>) {
                    return .success(try player.feed(bytes, into: &session))
                } catch {
                    return .failure(error)
                }
            }
            if case .failure = played { break }
        }
        do throws(RecordPlayer.BadRecord) {
            if case .failure(.badRecord(let bad)) = played { throw bad }
            try player.finish()
        } catch {
            throw CheckFailure("the record is malformed: \(error)")
        }
        session.flush()
        return session.sink.bytes
    }
}

/// Output collected in memory, for a run that stops between two lines once `stop`
/// says so (`typingd check` after a signal).
struct PausingArray: ByteSink {
    var bytes: [UInt8] = []
    let stop: @Sendable () -> Bool

    mutating func write(_ chunk: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: chunk)
    }

    var shouldPause: Bool { stop() }
}

/// The options a record's header names, as `typingd replay` and `typingd check` take
/// them: the session's, with the real clock (time comes from the record) and no drain
/// (the record says where it ended).
enum RecordOptions {
    /// The options of the header `preamble` read.
    static func parse(_ preamble: RecordPreamble) throws(CheckFailure) -> SessionOptions {
        var options: SessionOptions
        do {
            options = try SessionOptions.parse(preamble.options)
        } catch {
            throw CheckFailure(
                "the record's header names options this typingd does not take: "
                    + SessionOptions.message(for: error).split(separator: "\n").joined(separator: "; "))
        }
        if options.lateAt != .refuse {
            // SessionOptions validated it against the header's own --clock, which the
            // replay then replaces: refuse it here, where the clock is known.
            throw CheckFailure(
                "the record's header names --late-at \(options.lateAt.rawValue), but a record is played on the real clock, where no command carries \"at\""
            )
        }
        // A record carries its tables: typingd never names a file in its header,
        // which would make the replay read whatever that path holds where it runs.
        if !options.phrases.isEmpty {
            throw CheckFailure(
                "the record's header names --phrases: a record made by typingd --record holds its tables, it names no file"
            )
        }
        if !options.phraseTables.isEmpty && preamble.version != RecordFormat.firstVersion {
            throw CheckFailure(
                "the record's header holds --phrase-table, which only version \(RecordFormat.firstVersion) records do: a \(preamble.version) record has a \(RecordFormat.table) line per table"
            )
        }
        options.clock = .real
        options.noDrain = true
        return options
    }
}

/// What differs between expected and actual output, for people: line numbers and,
/// for an event line, the keys that differ.
package enum OutputDiff {
    /// At most this many differences (a changed, missing or extra line each) are
    /// described in full.
    static let maxReported = 20

    /// The report, or nil when `expected` and `actual` are the same bytes. When not
    /// every difference is described, the report ends with how many there are in
    /// all and `seeAll`, a way to see them.
    package static func describe(expected: [UInt8], actual: [UInt8], seeAll: String? = nil) -> String? {
        guard expected != actual else { return nil }
        let (prefix, oldMiddle, newMiddle) = middles(expected, actual)
        var report: [String] = []
        let (changes, exact) = alignment(oldMiddle, newMiddle)
        if !exact {
            report.append(
                "  (over \(maxEdits) lines removed and added: lines are compared by position, so a line that only moved counts as changed, and so do the lines after it)"
            )
        }
        for change in changes.prefix(maxReported) {
            switch change {
            case let .changed(i, j):
                let line = prefix + i + 1
                report.append("  line \(line): " + keys(expected: oldMiddle[i], actual: newMiddle[j]))
                report.append("    expected: \(show(oldMiddle[i]))")
                report.append("    actual:   \(show(newMiddle[j]))")
            case let .missing(i):
                report.append("  line \(prefix + i + 1) is missing: \(show(oldMiddle[i]))")
            case let .extra(j, before):
                report.append("  extra line after expected line \(prefix + before): \(show(newMiddle[j]))")
            }
        }
        if changes.count > maxReported {
            let more = changes.count - maxReported
            report.append(
                "  … and \(more) more \(more == 1 ? "difference" : "differences"): \(tally(changes)) in all"
                    + (exact ? "" : " by position") + (seeAll.map { "; to see every one: \($0)" } ?? ""))
        }
        if !expected.isEmpty && !actual.isEmpty && expected.last != actual.last
            && (expected.last == 0x0A || actual.last == 0x0A)
        {
            report.append(
                actual.last == 0x0A
                    ? "  the expected file does not end with a line break"
                    : "  the output does not end with a line break")
        }
        return report.joined(separator: "\n")
    }

    /// "2 lines changed, 1 added": what `actual` changes in `expected`.
    package static func summary(expected: [UInt8], actual: [UInt8]) -> String {
        let (_, oldMiddle, newMiddle) = middles(expected, actual)
        let (changes, exact) = alignment(oldMiddle, newMiddle)
        return changes.isEmpty
            ? "the line breaks changed"
            : tally(changes) + (exact ? "" : " (compared by position: over \(maxEdits) lines removed and added)")
    }

    /// The lines of each between their equal first and last lines, and how many
    /// equal lines come first.
    static func middles(_ expected: [UInt8], _ actual: [UInt8])
        -> (prefix: Int, old: [ArraySlice<UInt8>], new: [ArraySlice<UInt8>])
    {
        let old = lines(expected), new = lines(actual)
        var prefix = 0
        while prefix < old.count && prefix < new.count && old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix && suffix < new.count - prefix
            && old[old.count - 1 - suffix] == new[new.count - 1 - suffix]
        { suffix += 1 }
        return (prefix, Array(old[prefix..<(old.count - suffix)]), Array(new[prefix..<(new.count - suffix)]))
    }

    /// "2 lines changed, 1 removed, 3 added".
    static func tally(_ changes: [Change]) -> String {
        var changed = 0, removed = 0, added = 0
        for change in changes {
            switch change {
            case .changed: changed += 1
            case .missing: removed += 1
            case .extra: added += 1
            }
        }
        return [(changed, "changed"), (removed, "removed"), (added, "added")].filter { $0.0 > 0 }
            .enumerated().map { index, part in index == 0 ? "\(count(part.0, "line")) \(part.1)" : "\(part.0) \(part.1)"
            }
            .joined(separator: ", ")
    }

    /// "1 line", "3 lines".
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }

    /// The lines of `bytes` (without their LF).
    static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    package enum Change {
        case changed(Int, Int)
        case missing(Int)
        case extra(Int, after: Int)
    }

    /// Pairs the lines of two runs of differing lines: a shortest edit script
    /// (Myers' O((N+M)·D) algorithm) keeps equal lines out of the report; between two
    /// equal lines, the removed and added lines pair up in order as changes, the
    /// rest are missing or extra. When more than ``maxEdits`` lines are removed
    /// and added, the lines pair up by position instead, and a pair of equal lines
    /// is still left out: a line is never reported as changed into itself.
    /// `exact` tells whether the changes are a shortest script or lines paired by
    /// position, past ``maxEdits``: then a line that only moved counts as changed,
    /// and so do the lines after it.
    package static func alignment(_ old: [ArraySlice<UInt8>], _ new: [ArraySlice<UInt8>]) -> (
        changes: [Change], exact: Bool
    ) {
        var changes: [Change] = []
        guard let edits = shortestEdits(old, new) else {
            for index in 0..<max(old.count, new.count) {
                if index < old.count && index < new.count {
                    if old[index] != new[index] { changes.append(.changed(index, index)) }
                } else if index < old.count {
                    changes.append(.missing(index))
                } else {
                    changes.append(.extra(index, after: old.count))
                }
            }
            return (changes, false)
        }
        var i = 0, j = 0
        var removed: [Int] = [], added: [Int] = []
        func settle() {
            for (a, b) in zip(removed, added) { changes.append(.changed(a, b)) }
            for a in removed.dropFirst(added.count) { changes.append(.missing(a)) }
            for b in added.dropFirst(removed.count) { changes.append(.extra(b, after: i)) }
            removed.removeAll()
            added.removeAll()
        }
        for edit in edits {
            switch edit {
            case .keep:
                settle()
                i += 1
                j += 1
            case .add:
                added.append(j)
                j += 1
            case .remove:
                removed.append(i)
                i += 1
            }
        }
        settle()
        return (changes, true)
    }

    /// At most this many lines removed and added are aligned line by line.
    static let maxEdits = 1_000

    package enum Edit {
        case keep, remove, add
    }

    /// A shortest edit script from `old` to `new` (Myers 1986), or nil when it would
    /// take more than ``maxEdits`` edits. Time O((N+M)·D), memory O(D²): each step
    /// keeps the 2d + 1 diagonals it could have reached, for the way back.
    package static func shortestEdits(_ oldLines: [ArraySlice<UInt8>], _ newLines: [ArraySlice<UInt8>]) -> [Edit]? {
        // Each distinct line gets a number first: the search compares numbers, not
        // lines that may be long and alike up to their last bytes.
        var numbers: [ArraySlice<UInt8>: Int] = [:]
        let old = oldLines.map { line in
            numbers[line]
                ?? {
                    numbers[line] = numbers.count; return numbers.count - 1
                }()
        }
        let new = newLines.map { line in
            numbers[line]
                ?? {
                    numbers[line] = numbers.count; return numbers.count - 1
                }()
        }
        let n = old.count, m = new.count
        let limit = min(n + m, maxEdits)
        let offset = limit + 1
        // furthest[k + offset]: the furthest x on diagonal k (y = x - k) after d edits.
        var furthest = [Int](repeating: 0, count: 2 * limit + 3)
        var trace: [[Int]] = []
        for d in 0...limit {
            trace.append(Array(furthest[(offset - d)...(offset + d)]))
            for k in stride(from: -d, through: d, by: 2) {
                var x =
                    (k == -d || (k != d && furthest[k - 1 + offset] < furthest[k + 1 + offset]))
                    ? furthest[k + 1 + offset] // down: an added line
                    : furthest[k - 1 + offset] + 1 // right: a removed line
                var y = x - k
                while x < n && y < m && old[x] == new[y] {
                    x += 1
                    y += 1
                }
                furthest[k + offset] = x
                if x >= n && y >= m {
                    return backtrack(trace: trace, d: d, n: n, m: m)
                }
            }
        }
        return nil
    }

    /// The edits of the path that ``shortestEdits(_:_:)`` found, first to last.
    private static func backtrack(trace: [[Int]], d: Int, n: Int, m: Int) -> [Edit] {
        var edits: [Edit] = []
        var x = n, y = m
        for step in stride(from: d, to: 0, by: -1) {
            let before = trace[step] // diagonal k's furthest x after step - 1 edits, at k + step
            let k = x - y
            let down = k == -step || (k != step && before[k - 1 + step] < before[k + 1 + step])
            let previousK = down ? k + 1 : k - 1
            let previousX = before[previousK + step], previousY = previousX - previousK
            while x > previousX + (down ? 0 : 1) && y > previousY + (down ? 1 : 0) {
                edits.append(.keep)
                x -= 1
                y -= 1
            }
            edits.append(down ? .add : .remove)
            x = previousX
            y = previousY
        }
        while x > 0 && y > 0 {
            edits.append(.keep)
            x -= 1
            y -= 1
        }
        return edits.reversed()
    }

    /// Which keys of two event lines differ, as a sentence.
    static func keys(expected: ArraySlice<UInt8>, actual: ArraySlice<UInt8>) -> String {
        guard let old = JSONLine(expected), let new = JSONLine(actual) else { return "the line differs" }
        var differences: [String] = []
        for (key, value) in old.pairs {
            if let other = new.value(of: key) {
                if json_equal(value, other) == 0 {
                    differences.append("key \"\(key)\": expected \(JSONLine.dump(value)), got \(JSONLine.dump(other))")
                }
            } else {
                differences.append("key \"\(key)\" is missing")
            }
        }
        for (key, _) in new.pairs where old.value(of: key) == nil {
            differences.append("extra key \"\(key)\"")
        }
        if differences.isEmpty {
            return old.pairs.map(\.key) == new.pairs.map(\.key)
                ? "the same keys and values, written differently"
                : "the same keys and values, in another order"
        }
        return differences.joined(separator: "; ")
    }

    /// A line for a report, shortened when long.
    /// Bytes that are not UTF-8 are written as `\xNN`, so that two lines that differ
    /// only there do not print the same.
    package static func show(_ line: ArraySlice<UInt8>) -> String {
        let head = line.prefix(1_200) // 300 scalars are at most 1,200 bytes
        var text = String(validating: head, as: UTF8.self) ?? hexInvalid(head)
        if head.count < line.count || text.unicodeScalars.count > 300 {
            text = String(String.UnicodeScalarView(text.unicodeScalars.prefix(300))) + " …"
        }
        return text
    }

    /// `bytes` as text, each byte of an invalid UTF-8 sequence as `\xNN`.
    static func hexInvalid(_ bytes: ArraySlice<UInt8>) -> String {
        var out = ""
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var position = bytes.startIndex
        while true {
            let start = position
            switch decoder.decode(&iterator) {
            case let .scalarValue(scalar):
                out.unicodeScalars.append(scalar)
                position += UTF8.width(scalar)
            case .error:
                // The decoder consumed at least one byte; show the first as \xNN and
                // start again right after it.
                out += TextFormat.invalidByte(bytes[start])
                position = start + 1
                iterator = bytes[position...].makeIterator()
                decoder = UTF8()
            case .emptyInput:
                return out
            }
        }
    }
}

/// A JSON object line parsed with jansson, for comparing key by key.
final class JSONLine {
    private let root: UnsafeMutablePointer<json_t>
    /// The keys in the order they were written, with their (borrowed) values.
    private(set) var pairs: [(key: String, value: UnsafeMutablePointer<json_t>)] = []

    init?(_ bytes: ArraySlice<UInt8>) {
        var error = json_error_t()
        let parsed = bytes.withUnsafeBytes { raw in
            json_loadb(raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count, 0, &error)
        }
        guard let parsed else { return nil }
        guard cj_is_object(parsed) != 0 else {
            json_decref(parsed)
            return nil
        }
        root = parsed
        var iterator = json_object_iter(root)
        while let current = iterator {
            if let key = json_object_iter_key(current), let value = json_object_iter_value(current) {
                pairs.append((String(cString: key), value))
            }
            iterator = json_object_iter_next(root, current)
        }
    }

    deinit {
        json_decref(root)
    }

    /// The value of `key` (borrowed), if present.
    func value(of key: String) -> UnsafeMutablePointer<json_t>? {
        json_object_get(root, key)
    }

    /// A value as compact JSON.
    static func dump(_ value: UnsafeMutablePointer<json_t>) -> String {
        guard let text = json_dumps(value, Int(JSON_COMPACT | JSON_ENCODE_ANY)) else { return "?" }
        defer { free(text) }
        return String(cString: text)
    }
}
