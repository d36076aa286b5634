import Testing
import TypingCore
import TypingProtocol
@testable import TypingCluster
import TypingTestSupport

/// The router's stamp (`"at"` added before the closing brace) against the
/// shard's engine: a stamped line is answered as the line itself would be, but
/// for the time.
@Suite("LineRouting: stamping never changes a line's answer")
struct LineRoutingStampTests {
    static let time = 1234

    /// Lines near commands: every command, good and bad values of its fields,
    /// unknown keys, nested values, escapes, and spaces around the closing brace.
    static func lines(seed: UInt64, count: Int) -> [String] {
        var random = SplitMix64(seed: seed)
        let names = Command.Name.allCases.map(\.rawValue)
        let fields: [(String, [String])] = [
            ("user", ["\"ana\"", "\"bo\"", "5", "\"\"", "null", "[]", "\"a\\u0062\""]),
            (
                "id",
                [
                    "\"i\"", "7", "\"typingd:x\"", "1.5", "[]", "null", "\"\(String(repeating: "x", count: 300))\"",
                    "9007199254740992"
                ]
            ),
            ("thread", ["\"t\"", "\"\"", "3", "null"]),
            ("view", ["\"list\"", "\"chat\"", "\"grid\"", "1"]),
            ("name", ["\"Ana\"", "7", "\"\""]),
            ("empty", ["true", "\"x\""]),
            ("activity", ["\"typing\"", "\"recording\"", "\"dance\"", "0"]),
            ("timeout_ms", ["5000", "-1", "0", "\"5\"", "99999999999999"]),
            ("send_typing", ["false", "1"]),
            ("receive_typing", ["false", "true", "\"no\""]),
            ("locale", ["\"en\"", "\"\"", "5"]),
            ("by", ["\"bo\"", "3"]),
            ("x", ["{\"at\":1}", "[{\"at\":2}]", "\"}\""]),
            ("at", ["5", "null", "\"x\"", "-1"]),
            ("\\u0061t", ["5", "null"])
        ]
        let convs = [
            "\"general\"", "\"dm:a:b\"", "\"\"", "\"g\\u0065neral\"", "\"\(String(repeating: "c", count: 300))\""
        ]
        let tails = ["", " ", "\t", "\r", " \r", "\r\t", "\r\r"]
        var out: [String] = []
        for _ in 0..<count {
            var parts = ["\"cmd\":\"\(names[random.below(names.count)])\""]
            if random.below(8) != 0 { parts.append("\"conv\":\(convs[random.below(convs.count)])") }
            for _ in 0..<random.below(5) {
                let (key, values) = fields[random.below(fields.count)]
                if parts.contains(where: { $0.hasPrefix("\"\(key)\":") }) { continue }
                parts.append("\"\(key)\":\(values[random.below(values.count)])")
            }
            // Shuffled, so that every field is sometimes last, before the stamp.
            for index in parts.indices.reversed() { parts.swapAt(index, random.below(index + 1)) }
            out.append("{" + parts.joined(separator: ",") + "}" + tails[random.below(tails.count)])
        }
        return out
    }

    /// The events of one line (by subject), with every `"at":N` and
    /// `"deadline":N` taken out.
    static func answer(_ harness: inout Harness, _ line: String) -> [String] {
        harness.feed(line + "\n")
        let lines = harness.subjects()
            .sorted { $0.key < $1.key }.flatMap { subject, lines in lines.map { "\(subject) \($0)" } }
        harness.output.clearTouched()
        return lines.map { $0.replacing(/"(at|deadline)":\d+/, with: "\"$1\":_") }
    }

    @Test("a stamped line is answered as the line would be, but for the time", arguments: [21, 22] as [UInt64])
    func stampedAnswersAlike(seed: UInt64) {
        let rules = LineRouting(partitions: 4, maxLine: 100_000, stamp: true)
        var plain = Harness(), stamped = Harness()
        var stampedCount = 0, differing: [String] = []
        for line in Self.lines(seed: seed, count: 4_000) {
            var stored: [UInt8]? = nil
            let outcome = Array(line.utf8).withUnsafeBytes { bytes in
                rules.route(bytes, time: Self.time) { _, out in stored = Array(out) }
            }
            guard case .one = outcome, let stored else { continue }
            let kept = String(decoding: stored, as: UTF8.self)
            if kept != line { stampedCount += 1 }
            let before = Self.answer(&plain, line), after = Self.answer(&stamped, kept)
            if before != after && differing.count < 5 {
                differing.append(
                    "\(line.debugDescription) stored as \(kept.debugDescription):\n  \(before)\n  \(after)")
            }
        }
        #expect(differing.isEmpty, "\(differing.joined(separator: "\n"))")
        #expect(stampedCount > 500, "\(stampedCount) lines stamped")
    }

    @Test("a command without its own time is stamped whatever spaces (jansson's: space, tab, CR) follow its brace")
    func stampedAfterAnySpaces() {
        let rules = LineRouting(partitions: 4, maxLine: 1000, stamp: true)
        for tail in ["", " ", "\t", "\r", " \r ", "\r\t\r"] {
            for head in [
                "{\"cmd\":\"join\",\"conv\":\"general\",\"user\":\"ana\"}", "{\"cmd\":\"offline\",\"user\":\"ana\"}"
            ] {
                let line = head + tail
                var stored: [String] = []
                _ = Array(line.utf8).withUnsafeBytes { bytes in
                    rules.route(bytes, time: Self.time) { _, out in stored.append(String(decoding: out, as: UTF8.self))
                    }
                }
                #expect(
                    !stored.isEmpty && stored.allSatisfy { $0.hasSuffix(",\"at\":\(Self.time)}") },
                    "\(line.debugDescription): \(stored)")
            }
        }
    }
}
