import Testing
import TypingCore
import TypingTestSupport

/// Random protocol-v4 sessions, every command kind and every option at random values,
/// run through the engine and through ``ReferenceModel`` (the plain model of
/// ReferenceModelTests.swift), event for event, the end of input drained. A
/// difference is reported with the seed, the options as typingd's flags, the session
/// shrunk to a short transcript (JSON lines typingd reads) and both outputs.
///
/// The self-test breaks each rule of the model in turn (``ReferenceModel/Mutant``) and
/// expects the comparison to notice: a test that cannot fail would show nothing.
@Suite("The engine against a plain model of protocol v4: side panes, quiet rooms, several, status, announcements")
struct ReferenceModelV4Tests {
    typealias Step = (command: Command, at: Int?)

    /// One random session: the engine's options and the commands, each with its `at`
    /// (nil: none); the end of input drains.
    struct Session {
        var configuration: EngineConfiguration
        var steps: [Step]
    }

    /// Where engine and model first disagree: the step (`steps.count`: the drain at the
    /// end of input) and what each wrote there.
    struct Difference {
        var step: Int
        var engine: [String]
        var model: [String]
    }

    // MARK: Sessions

    /// Options at random: v3's (timeout, styles, typing events, audience, order,
    /// listing cap) and v4's three, each absent now and then.
    static func options(_ rng: inout SplitMix64) -> EngineConfiguration {
        var c = EngineConfiguration()
        c.timeout = [3000, 500, 1500, 1 + rng.below(5000)][rng.below(4)]
        c.style = rng.below(2) == 0 ? .group : .compact
        c.listStyle = rng.below(2) == 0 ? .group : .compact
        c.typingEvents = rng.below(3) != 0
        c.audience = rng.below(2) == 0 ? .members : .open
        c.order = EngineConfiguration.Order.allCases[rng.below(3)]
        c.maxListed = [100, 1, 2, 3][rng.below(4)]
        c.quietAbove = rng.below(3) == 0 ? nil : 1 + rng.below(7)
        c.severalAfter = rng.below(4) == 0 ? nil : 1 + rng.below(4)
        c.announceAfter =
            rng.below(6) == 0
            ? nil
            : rng.below(2) == 0 ? [1, 40, 300, 1000, 2500, 86_400_000][rng.below(6)] : 1 + rng.below(3000)
        return c
    }

    /// Names: a few plain ones (so that several typers are named), some unnamed, and
    /// some hostile ones from the v3 test.
    static let names: [String?] = [
        nil, "Ana", "Ben", "Cy", "Dee", "", "Someone", "Zoë", "Zoe\u{308}",
        "A long name that is cut here", "Ana\u{1}"
    ]

    /// A random command of any kind over `convs` conversations and `users` users, at
    /// the main timeline or one of two threads.
    static func command(_ rng: inout SplitMix64, convs: Int, users: Int) -> Command {
        let conv = ID("c\(rng.below(convs))"), user = ID("u\(rng.below(users))")
        let thread: Identifier? = rng.below(2) == 0 ? nil : ID("t\(rng.below(2))")
        switch rng.below(32) {
        case 0..<5:
            return .join(
                conv: conv, user: user, name: names[rng.below(names.count)],
                sendTyping: rng.below(12) == 0 ? false : (rng.below(4) == 0 ? true : nil),
                receiveTyping: rng.below(8) == 0 ? rng.below(3) != 0 : nil)
        case 5: return .leave(conv: conv, user: user)
        case 6: return .remove(conv: conv, user: user, by: rng.below(2) == 0 ? nil : ID("u\(rng.below(users))"))
        case 7, 8:
            let list = rng.below(4) == 0
            return .open(conv: conv, user: user, thread: list ? nil : thread, view: list ? .list : .chat)
        case 9, 10: return .open(conv: conv, user: user, thread: ID("t\(rng.below(2))"), pane: .side)
        case 11: return .close(conv: conv, user: user)
        case 12: return .close(conv: conv, user: user, pane: .side)
        case 13:
            return .user(
                user: user, name: rng.below(3) == 0 ? names[rng.below(names.count)] : nil,
                sendTyping: rng.below(5) == 0 ? rng.below(2) == 0 : nil,
                receiveTyping: rng.below(3) == 0 ? rng.below(2) == 0 : nil)
        case 14: return .offline(user: user)
        case 15, 16: return .send(conv: conv, user: user, thread: thread)
        case 17: return .query(conv: conv, thread: thread)
        case 18: return .tick
        case 19: return .forget(conv: conv, user: user)
        case 20..<24:
            // A bot's status: its own words, often with a long timeout.
            let empty = rng.below(12) == 0
            let timeout =
                rng.below(2) == 0 ? 10_000 + rng.below(50_000) : (rng.below(2) == 0 ? nil : 1 + rng.below(6000))
            let status =
                rng.below(2) == 0
                ? "is thinking"
                : ReferenceModelTests.statuses[rng.below(ReferenceModelTests.statuses.count)]
            return .type(
                conv: conv, user: user, thread: thread, status: status, timeout: timeout, activity: .status,
                empty: empty)
        default:
            let activity = rng.below(3) == 0 ? Activity.allCases[rng.below(Activity.allCases.count - 1)] : .typing
            let empty = rng.below(10) == 0
            let timeout = rng.below(4) == 0 ? 1 + rng.below(6000) : nil
            return .type(conv: conv, user: user, thread: thread, timeout: timeout, activity: activity, empty: empty)
        }
    }

    /// The session of `seed`: its options, then `steps` commands, their times moving
    /// on by nothing (equal times), a little, past timeouts and announcements, or far;
    /// one session in five runs at the top of the clock, where deadlines and
    /// announcements are capped at 2^53 − 1 and so fall at the same time.
    static func session(seed: UInt64, steps: Int = 200) -> Session {
        var rng = SplitMix64(seed: seed)
        let configuration = options(&rng)
        let convs = 1 + rng.below(2), users = 4 + rng.below(4)
        var time = rng.below(5) == 0 ? ReferenceModel.maxTime - 40_000 : 0
        var list: [Step] = []
        for _ in 0..<steps {
            let command = command(&rng, convs: convs, users: users)
            var at: Int?
            switch rng.below(20) {
            case 0..<3: at = nil
            case 3..<6: at = time
            case 6..<15: at = time + rng.below(300)
            case 15..<19: at = time + rng.below(3_000)
            default: at = time + rng.below(40_000)
            }
            at = at.map { min($0, ReferenceModel.maxTime) }
            if case .tick = command, at == nil { at = time } // tick needs one
            if let at { time = at }
            list.append((command, at))
        }
        return Session(configuration: configuration, steps: list)
    }

    // MARK: Running and reporting

    /// Runs `session` through the engine and the model (broken by `mutant` when
    /// given); every `rebuildEvery` steps (0: never) the engine is replaced by one
    /// rebuilt from its snapshot, which the model must not be able to tell.
    static func firstDifference(
        _ session: Session, mutant: ReferenceModel.Mutant? = nil, rebuildEvery: Int = 0,
        checks: Bool = true
    ) -> Difference? {
        // The invariants are checked after each step's comparison, so that a step
        // that writes the wrong events is reported as such before a check traps.
        var h = Harness(session.configuration, checksEveryStep: false)
        var model = ReferenceModel(session.configuration, mutant: mutant)
        let same = { (a: [String], b: [String]) in a.elementsEqual(b) { $0.utf8.elementsEqual($1.utf8) } }
        for (index, step) in session.steps.enumerated() {
            if rebuildEvery > 0 && index % rebuildEvery == rebuildEvery - 1 {
                // The snapshot is a command: what falls due by then fires first.
                var events: [Event] = []
                h.engine.apply(Request(.snapshot, line: 0), to: &events)
                let fired = events.filter {
                    switch $0 {
                    case .member, .streak, .snapshot: return false
                    default: return true
                    }
                }.map(Harness.describe)
                let expected = model.apply(.snapshot, at: nil, line: 0)
                if !same(fired, expected) { return Difference(step: index, engine: fired, model: expected) }
                var rebuilt = Harness(session.configuration, checksEveryStep: false)
                EngineSnapshotTests.rebuild(from: events, into: &rebuilt)
                rebuilt.line = h.line
                h = rebuilt
            }
            let engine = h.run(step.command, at: step.at)
            let expected = model.apply(step.command, at: step.at, line: h.line)
            if !same(engine, expected) { return Difference(step: index, engine: engine, model: expected) }
            if checks { h.engine.checkInvariants() }
        }
        var events: [Event] = []
        h.engine.drain(sink: &events)
        if checks { h.engine.checkInvariants() }
        let engine = events.map(Harness.describe), expected = model.drain()
        return same(engine, expected) ? nil : Difference(step: session.steps.count, engine: engine, model: expected)
    }

    /// The failing session cut short: only the steps up to the first difference,
    /// then chunks of commands dropped (halves, quarters, … single ones) while
    /// engine and model still differ somewhere; at most `budget` runs.
    static func shrink(
        _ session: Session, mutant: ReferenceModel.Mutant? = nil, rebuildEvery: Int = 0,
        budget: Int = 3_000
    ) -> Session {
        var best = session
        var runs = 0
        func fails(_ candidate: inout Session) -> Bool {
            runs += 1
            guard let difference = firstDifference(candidate, mutant: mutant, rebuildEvery: rebuildEvery, checks: false)
            else { return false }
            candidate.steps = Array(candidate.steps.prefix(difference.step + 1))
            return true
        }
        guard fails(&best) else { return session }
        var chunk = max(best.steps.count / 2, 1)
        while chunk >= 1 && runs < budget {
            var start = 0
            while start < best.steps.count && runs < budget {
                var candidate = best
                candidate.steps.removeSubrange(start..<min(start + chunk, best.steps.count))
                if fails(&candidate) { best = candidate } else { start += chunk }
            }
            chunk /= 2
        }
        return best
    }

    /// What a difference is reported with: the seed, the options as typingd's flags,
    /// where the session first differs, the session shrunk, as the lines typingd
    /// reads, and both outputs where the shrunk session first differs.
    static func report(
        seed: UInt64, _ session: Session, mutant: ReferenceModel.Mutant? = nil,
        rebuildEvery: Int = 0
    ) -> String {
        func place(_ difference: Difference?, of steps: Int) -> String {
            guard let difference else { return "?" }
            return difference.step < steps ? "line \(difference.step + 1)" : "the end of input (drain)"
        }
        let first = firstDifference(session, mutant: mutant, rebuildEvery: rebuildEvery, checks: false)
        let short = shrink(session, mutant: mutant, rebuildEvery: rebuildEvery)
        let difference = firstDifference(short, mutant: mutant, rebuildEvery: rebuildEvery, checks: false)
        return """
            seed \(seed): the engine and the model differ\(rebuildEvery > 0 ? " (the engine rebuilt from its snapshot every \(rebuildEvery) commands, where the transcript is as long)" : "")
            options: \(flags(session.configuration))
            first at \(place(first, of: session.steps.count)) of \(session.steps.count):
            engine: \(first?.engine ?? [])
            model:  \(first?.model ?? [])
            shortest failing transcript found (\(short.steps.count) commands; input ends after the last):
            \(short.steps.map { json($0.command, at: $0.at) }.joined(separator: "\n"))
            at \(place(difference, of: short.steps.count)):
            engine: \(difference?.engine ?? [])
            model:  \(difference?.model ?? [])
            """
    }

    /// The options as typingd's command line.
    static func flags(_ c: EngineConfiguration) -> String {
        var flags = [
            "--clock manual", "--timeout-ms \(c.timeout)", "--style \(c.style.rawValue)",
            "--list-style \(c.listStyle.rawValue)", "--audience \(c.audience.rawValue)",
            "--order \(c.order.rawValue)", "--max-listed \(c.maxListed)"
        ]
        if c.typingEvents { flags.append("--typing-events") }
        if let n = c.quietAbove { flags.append("--quiet-above \(n)") }
        if let k = c.severalAfter { flags.append("--several-after \(k)") }
        if let m = c.announceAfter { flags.append("--announce-after-ms \(m)") }
        return flags.joined(separator: " ")
    }

    /// A command as the JSON line typingd reads.
    static func json(_ command: Command, at: Int?) -> String {
        var fields: [String] = []
        func add(_ key: String, _ value: String?) { if let value { fields.append("\"\(key)\":\(quoted(value))") } }
        func add(_ key: String, raw value: String?) { if let value { fields.append("\"\(key)\":\(value)") } }
        switch command {
        case let .join(conv, user, name, sendTyping, locale, receiveTyping):
            add("cmd", "join"); add("conv", conv.string); add("user", user.string); add("name", name)
            add("send_typing", raw: sendTyping.map(String.init));
            add("receive_typing", raw: receiveTyping.map(String.init))
            add("locale", locale)
        case let .type(conv, user, thread, status, timeout, activity, empty):
            add("cmd", "type"); add("conv", conv.string); add("user", user.string); add("thread", thread?.string)
            add("empty", raw: empty ? "true" : nil); add("activity", activity == .typing ? nil : activity.name)
            add("status", status); add("timeout_ms", raw: timeout.map(String.init))
        case let .send(conv, user, thread):
            add("cmd", "send"); add("conv", conv.string); add("user", user.string); add("thread", thread?.string)
        case let .leave(conv, user):
            add("cmd", "leave"); add("conv", conv.string); add("user", user.string)
        case let .remove(conv, user, by):
            add("cmd", "remove"); add("conv", conv.string); add("user", user.string); add("by", by?.string)
        case let .offline(user):
            add("cmd", "offline"); add("user", user.string)
        case let .open(conv, user, thread, view, pane):
            add("cmd", "open"); add("conv", conv.string); add("user", user.string); add("thread", thread?.string)
            add("view", view == .list ? "list" : nil); add("pane", pane == .side ? "side" : nil)
        case let .close(conv, user, pane):
            add("cmd", "close"); add("conv", conv.string); add("user", user.string);
            add("pane", pane == .side ? "side" : nil)
        case let .user(user, name, sendTyping, locale, receiveTyping):
            add("cmd", "user"); add("user", user.string); add("name", name)
            add("send_typing", raw: sendTyping.map(String.init));
            add("receive_typing", raw: receiveTyping.map(String.init))
            add("locale", locale)
        case .tick: add("cmd", "tick")
        case let .query(conv, thread): add("cmd", "query"); add("conv", conv.string); add("thread", thread?.string)
        case .stats: add("cmd", "stats")
        case .snapshot: add("cmd", "snapshot")
        case let .forget(conv, user): add("cmd", "forget"); add("conv", conv.string); add("user", user.string)
        case let .restore(conv, user, pane, announceAt, announced):
            add("cmd", "restore"); add("conv", conv.string); add("user", user.string)
            add("pane", pane == .side ? "side" : nil); add("announce_at", raw: announceAt.map(String.init))
            add("announced", announced)
        }
        add("at", raw: at.map(String.init))
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// A JSON string: `"`, `\` and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    // MARK: Tests

    /// Sessions per test case (of 200 commands each; four cases).
    static let perCase = 40

    /// Seeds 0 ..< 160; the engine checks its invariants after every step in one
    /// session of four (the checks cost more than the rest).
    @Test("random v4 sessions with every option: the engine writes exactly what the model writes", arguments: 0..<4)
    func sessions(chunk: Int) {
        for index in 0..<Self.perCase {
            let seed = UInt64(chunk * Self.perCase + index)
            let session = Self.session(seed: seed)
            if Self.firstDifference(session, checks: seed % 4 == 0) != nil {
                Issue.record(Comment(rawValue: Self.report(seed: seed, session)))
                return
            }
        }
    }

    @Test("random v4 sessions, the engine rebuilt from its snapshot every 25 commands", arguments: 0..<2)
    func rebuilt(chunk: Int) {
        for index in 0..<15 {
            let seed = UInt64(10_000 + chunk * 15 + index)
            let session = Self.session(seed: seed)
            if Self.firstDifference(session, rebuildEvery: 25, checks: false) != nil {
                Issue.record(Comment(rawValue: Self.report(seed: seed, session, rebuildEvery: 25)))
                return
            }
        }
    }

    /// The sessions of the first test, which pass with the model as written, fail
    /// with each of its rules broken (``ReferenceModel/Mutant``): some seed below 160
    /// tells the broken model from the engine.
    @Test(
        "each rule of the model broken on purpose makes the comparison fail", arguments: ReferenceModel.Mutant.allCases)
    func brokenRule(mutant: ReferenceModel.Mutant) {
        for seed in 0..<UInt64(4 * Self.perCase) {
            if Self.firstDifference(Self.session(seed: seed), mutant: mutant, checks: false) != nil { return }
        }
        Issue.record("no session tells the engine from the model with \(mutant) broken")
    }
}
