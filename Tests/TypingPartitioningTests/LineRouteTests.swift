import Testing
import TypingCore
import TypingPartitioning
import TypingProtocol
import TypingTestSupport

/// `Partition.route(line:among:)`: what a router reads of one line, and its quick
/// reading (`PlainLine`) against jansson's.
@Suite("Routing a line")
struct LineRouteTests {
    static func route(_ text: String, among count: Int = 4) -> Partition.LineRoute {
        Array(text.utf8).withUnsafeBytes { Partition.route(line: $0, among: count) }
    }

    static func decoded(_ bytes: [UInt8], among count: Int = 4) -> Partition.LineRoute {
        bytes.withUnsafeBytes { Partition.decodedRoute(line: $0, among: count) }
    }

    @Test("a command of one conversation goes to its partition, even when the rest of it is wrong")
    func oneConversation() {
        let good = Self.route(#"{"cmd":"join","conv":"general","user":"ana","id":"j1"}"#)
        #expect(good == Partition.LineRoute(route: .one(3), hasTime: false, stringID: "j1"))
        // No user: the engine of general's partition answers with its error.
        #expect(Self.route(#"{"cmd":"join","conv":"general"}"#).route == .one(3))
        #expect(
            Self.route(#"{"cmd":"type","conv":"general","user":"ana","at":"soon"}"#)
                == Partition.LineRoute(route: .one(3), hasTime: true, stringID: nil))
        // Read by jansson (an escape), the same partition.
        #expect(Self.route(#"{"cmd":"query","conv":"gen\u0065ral"}"#).route == .one(3))
        #expect(Self.route(#"{"cmd":"query","conv":"\u00e9"}"#).route == .one(1))
    }

    @Test("commands of every partition are decoded whole; a line that is no command goes nowhere in particular")
    func everyAndNone() {
        #expect(
            Self.route(#"{"cmd":"tick","at":5}"#) == Partition.LineRoute(route: .every, hasTime: true, stringID: nil))
        #expect(
            Self.route(#"{"cmd":"offline","user":"ana","id":"o"}"#)
                == Partition.LineRoute(route: .every, hasTime: false, stringID: "o"))
        for line in [
            #"{"cmd":"tick"}"#, #"{"cmd":"offline"}"#, "not json", "[1]", "{}", #"{"cmd":"fly","conv":"x"}"#,
            #"{"cmd":"join","conv":5,"user":"a"}"#, #"{"cmd":"join","conv":"x","user":"a","user":"b"}"#,
            #"{"cmd":"join","conv":"x"} x"#, #"{"cmd":"join","conv":"x",}"#, "{\"cmd\":\"join\",\"conv\":\"x\u{1}\"}"
        ] {
            #expect(Self.route(line).route == nil, "\(line)")
        }
        // The id of a line that is no command is still read: the router refuses the shards' own.
        #expect(
            Self.route(#"{"id":"typingd:x","cmd":"fly"}"#)
                == Partition.LineRoute(route: nil, hasTime: false, stringID: "typingd:x"))
    }

    /// Lines near the plain shape: keys and values that the quick reading takes
    /// or leaves to jansson, whitespace, and damage (a byte changed, dropped or
    /// added, a cut, a key twice).
    static func lines(seed: UInt64, count: Int) -> [[UInt8]] {
        var random = SplitMix64(seed: seed)
        let keys = ["cmd", "conv", "user", "id", "at", "name", "thread", "x", "c\\u006fnv", "cmd ", "Cmd", "", "\u{E9}"]
        let commands = Command.Name.allCases.map(\.rawValue) + ["fly", "Join", "join ", "jo\\u0069n"]
        // The first 14 values and 5 spacings are plain; the rest are not.
        let values = [
            "\"general\"", "\"dm:alice:bob\"", "\"\"", "\"\u{E9}t\u{E9}\"", "\"\u{1F600}\"", "\"\u{7F}\"", "0", "-0",
            "7",
            "-12", "123456789012345678", "true", "false", "null",
            "\"a\\\"b\"", "\"a\\u0000b\"", "007", "1.5", "1e3", "1234567890123456789",
            "99999999999999999999", "-", "tru", "truex", "nul", "[]", "{}", "[1,2]", "{\"a\":1}"
        ]
        let raw: [[UInt8]] = [
            [0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x9F, 0x98],
            [0xE2, 0x82, 0xAC], [0xFF], [0x01], [0x00], [0x0D], [0x0A], [0x09], [0x5C]
        ]
        let allSpaces = ["", "", " ", "\t", "  ", "\r", "\n"]
        var out: [[UInt8]] = []
        for _ in 0..<count {
            // Half the lines are plain until damaged.
            let plain = random.below(2) == 0
            let spaces = plain ? Array(allSpaces.prefix(5)) : allSpaces
            let values = plain ? Array(values.prefix(14)) : values
            var line = Array(spaces[random.below(spaces.count)].utf8) + [0x7B]
            // Half the lines start as commands of one conversation.
            var fields: [(String, String)] = []
            if random.below(2) == 0 {
                fields = [
                    ("cmd", "\"" + ["join", "type", "send", "query", "forget"][random.below(5)] + "\""),
                    ("conv", values[random.below(5)])
                ]
            }
            for _ in 0..<random.below(5) {
                let key: String
                switch random.below(10) {
                case 0..<2: key = "cmd"
                case 2..<4: key = "conv"
                default: key = keys[random.below(keys.count)]
                }
                let value: String
                if key == "cmd" && random.below(4) != 0 {
                    value = "\"" + commands[random.below(commands.count)] + "\""
                } else {
                    value = values[random.below(values.count)]
                }
                fields.insert((key, value), at: random.below(fields.count + 1))
            }
            for (index, (key, value)) in fields.enumerated() {
                if index > 0 { line += Array(",".utf8) + Array(spaces[random.below(spaces.count)].utf8) }
                line += Array("\"\(key)\"".utf8) + Array(spaces[random.below(spaces.count)].utf8) + [0x3A]
                line += Array(spaces[random.below(spaces.count)].utf8) + Array(value.utf8)
            }
            line +=
                Array(spaces[random.below(spaces.count)].utf8) + [0x7D] + Array(spaces[random.below(spaces.count)].utf8)
            switch random.below(12) {
            case 0 where !line.isEmpty: line[random.below(line.count)] = raw[random.below(raw.count)][0]
            case 1 where !line.isEmpty: line.remove(at: random.below(line.count))
            case 2: line.insert(contentsOf: raw[random.below(raw.count)], at: random.below(line.count + 1))
            case 3: line = Array(line.prefix(random.below(line.count + 1)))
            case 4:
                // A string value that holds raw bytes (UTF-8 or not).
                let conv = Array("\"conv\":\"".utf8)
                line.insert(contentsOf: conv + raw[random.below(raw.count)] + [0x22, 0x2C], at: 1)
            default: break
            }
            out.append(line)
        }
        return out
    }

    @Test("the quick reading and jansson's route every line alike", arguments: [1, 2, 3] as [UInt64])
    func quickReadingAgrees(seed: UInt64) {
        var quick = 0, differing: [String] = []
        for line in Self.lines(seed: seed, count: 20_000) {
            let both = line.withUnsafeBytes { bytes -> (Partition.LineRoute, Partition.LineRoute, Bool) in
                (
                    Partition.route(line: bytes, among: 4), Partition.decodedRoute(line: bytes, among: 4),
                    PlainLine(bytes) != nil
                )
            }
            if both.2 { quick += 1 }
            if both.0 != both.1 && differing.count < 5 {
                differing.append(
                    "\(String(decoding: line, as: UTF8.self).debugDescription): \(both.0) against jansson's \(both.1)")
            }
        }
        #expect(differing.isEmpty, "\(differing.joined(separator: "\n"))")
        // Both readings are exercised: many lines are plain, many are not.
        #expect(quick > 1_500 && quick < 18_000, "\(quick) plain lines of 20000")
    }

    @Test("every command name is split as route(of:) splits its commands")
    func namesSplitAsCommands() {
        let conv = Identifier("c"), user = Identifier("u")
        let samples: [Command.Name: Command] = [
            .join: .join(conv: conv, user: user), .type: .type(conv: conv, user: user),
            .send: .send(conv: conv, user: user),
            .leave: .leave(conv: conv, user: user), .remove: .remove(conv: conv, user: user, by: nil),
            .offline: .offline(user: user),
            .open: .open(conv: conv, user: user), .close: .close(conv: conv, user: user), .user: .user(user: user),
            .tick: .tick, .query: .query(conv: conv), .stats: .stats, .snapshot: .snapshot,
            .forget: .forget(conv: conv, user: user),
            .restore: .restore(conv: conv, user: user)
        ]
        for name in Command.Name.allCases {
            guard let command = samples[name] else {
                Issue.record("no sample of \(name)")
                continue
            }
            let one = if case .one = Partition.route(of: command, among: 4) { true } else { false }
            #expect(Partition.goesToItsConversation(name) == one, "\(name)")
        }
    }
}
