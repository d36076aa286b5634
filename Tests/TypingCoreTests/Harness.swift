import TypingCore

/// Drives an engine line by line and describes what came out in short strings,
/// so expectations read like a transcript:
/// `"@100 g b: [a] Alice is typing..."`, `"@200 g a stopped send"`, `"ok 3"`.
///
/// After every step it checks the engine's invariants (``Engine/checkInvariants()``),
/// so every test that drives the engine also tests that its structures agree.
struct Harness {
    var engine: Engine
    var line = 0
    /// Whether every step is followed by an invariant check (big tests turn it
    /// off and check once at the end: a check costs time in proportion to the state).
    var checksEveryStep: Bool

    init(_ configuration: EngineConfiguration = EngineConfiguration(), checksEveryStep: Bool = true) {
        engine = Engine(configuration: configuration)
        self.checksEveryStep = checksEveryStep
    }

    /// Applies one command and returns what it wrote.
    @discardableResult
    mutating func run(_ command: Command, at: Int? = nil, id: Request.ID? = nil) -> [String] {
        line += 1
        var events: [Event] = []
        engine.apply(Request(command, id: id, at: at, line: line), to: &events)
        if checksEveryStep { engine.checkInvariants() }
        return events.map(Harness.describe)
    }

    /// Joins several users to `conv`, each named by the capitalized id.
    mutating func join(_ conv: String, _ users: String...) {
        for user in users {
            run(.join(conv: ID(conv), user: ID(user), name: user.prefix(1).uppercased() + user.dropFirst()))
        }
    }

    /// A keystroke.
    @discardableResult
    mutating func type(_ conv: String, _ user: String, at: Int? = nil, empty: Bool = false) -> [String] {
        run(.type(conv: ID(conv), user: ID(user), empty: empty), at: at)
    }

    /// Fires every remaining timeout.
    mutating func drain() -> [String] {
        var events: [Event] = []
        engine.drain(sink: &events)
        engine.checkInvariants()
        return events.map(Harness.describe)
    }

    /// A short, readable form of an event.
    static func describe(_ event: Event) -> String {
        switch event {
        case .indicator(let i):
            let ids = i.view.typing.map(\.string).joined(separator: ",")
            let more = i.view.more > 0 ? " more \(i.view.more)" : ""
            return "@\(i.at) \(i.conv) \(i.viewer): [\(ids)]\(more) \(i.view.text)"
        case .typing(let t):
            return "@\(t.at) \(t.conv) \(t.user) \(t.state.rawValue)" + (t.reason.map { " \($0.rawValue)" } ?? "")
        case .ok(let ack):
            return "ok \(ack.line)"
        case .error(let report):
            return "error \(report.line) \(report.code.rawValue)"
        case .state(let state):
            let open = state.open.isEmpty ? "" : " open=\(state.open.map(\.string))"
            return "state \(state.conv) members=\(state.members.map(\.string))\(open) typing=\(state.typing.map(\.string))"
        case .member(let m):
            return "member \(m.conv) \(m.user) name=\(m.name ?? "-") sendTyping=\(m.sendTyping) open=\(m.open)"
        case .streak(let s):
            return "streak \(s.conv) \(s.user) deadline=\(s.deadline) keystroke=\(s.keystroke)"
        case .snapshot(let s):
            return "snapshot conversations=\(s.conversations) members=\(s.members) typing=\(s.typing)"
        case .stats(let s):
            return "stats lines=\(s.lines) commands=\(s.commands) errors=\(s.errors) conversations=\(s.conversations) members=\(s.members) typing=\(s.typing) events=\(s.events)"
        }
    }
}

/// Shorthand for an identifier.
func ID(_ text: String) -> Identifier { Identifier(text) }
