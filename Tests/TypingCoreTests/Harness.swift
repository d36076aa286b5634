import TypingCore
import TypingTestSupport

/// Drives an engine line by line and describes what came out in short strings,
/// so expectations read like a transcript:
/// `"@100 g b: [a] Alice is typing..."`, `"@200 g a stopped send"`, `"ok 3"`.
///
/// After every step it checks the engine's invariants (``Engine/checkInvariants()``),
/// so every test that drives the engine also tests that its structures agree: every
/// step under `TYPINGD_TEST_THOROUGH=1` or `CI=true`, else every 16th step and at
/// every drain (TypingTestSupport's `TestDepth`).
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
        if checksEveryStep && TestDepth.checks(step: line) { engine.checkInvariants() }
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
            let activities = i.view.showsActivities ? " {\(i.view.activities.map(\.name).joined(separator: ","))}" : ""
            let place = i.thread.map { "\(i.conv)#\($0)" } ?? "\(i.conv)"
            let viewer = i.screen == .list ? "\(i.viewer)(list)" : i.pane == .side ? "\(i.viewer)(side)" : "\(i.viewer)"
            return "@\(i.at) \(place) \(viewer): [\(ids)]\(activities)\(more) \(i.view.text)"
        case .announce(let a):
            let place = a.thread.map { "\(a.conv)#\($0)" } ?? "\(a.conv)"
            let viewer = a.screen == .list ? "\(a.viewer)(list)" : a.pane == .side ? "\(a.viewer)(side)" : "\(a.viewer)"
            return "announce @\(a.at) \(place) \(viewer): \(a.text)"
        case .typing(let t):
            let place = t.thread.map { "\(t.conv)#\($0)" } ?? "\(t.conv)"
            return "@\(t.at) \(place) \(t.user) \(t.state.rawValue)" + (t.activity.map { " \($0.name)" } ?? "")
                + (t.status.map { " \"\($0)\"" } ?? "") + (t.reason.map { " \($0.rawValue)" } ?? "")
        case .ok(let ack):
            return "ok \(ack.line)"
        case .error(let report):
            return "error \(report.line) \(report.code.rawValue)"
        case .state(let state):
            let open = state.open.isEmpty ? "" : " open=\(state.open.map(\.string))"
            let place = state.thread.map { "\(state.conv)#\($0)" } ?? "\(state.conv)"
            let activities = state.activities.map { " activities=\($0.map(\.name))" } ?? ""
            return
                "state \(place) members=\(state.members.map(\.string))\(open) typing=\(state.typing.map(\.string))\(activities)"
        case .member(let m):
            var extras = ""
            if let locale = m.locale { extras += " locale=\(locale)" }
            if !m.receiveTyping { extras += " receiveTyping=false" }
            if let thread = m.thread { extras += " thread=\(thread)" }
            if m.view == .list { extras += " view=list" }
            if m.forgotten { extras += " forgotten" }
            if let side = m.side { extras += " side=\(side)" }
            if let joined = m.joined { extras += " joined=\(joined)" }
            for (label, state) in [("announce", m.announcement), ("sideAnnounce", m.sideAnnouncement)] {
                if let due = state.due { extras += " \(label)At=\(due) \(label)Rank=\(state.rank ?? 0)" }
                if let text = state.announced { extras += " \(label)d=\"\(text)\"" }
            }
            return "member \(m.conv) \(m.user) name=\(m.name ?? "-") sendTyping=\(m.sendTyping) open=\(m.open)\(extras)"
        case .streak(let s):
            let place = s.thread.map { "\(s.conv)#\($0)" } ?? "\(s.conv)"
            let activity = (s.activity == .typing ? "" : " \(s.activity.name)") + (s.status.map { " \"\($0)\"" } ?? "")
            let started = s.started.map { " started=\($0)" } ?? ""
            return "streak \(place) \(s.user)\(activity) deadline=\(s.deadline) keystroke=\(s.keystroke)\(started)"
        case .snapshot(let s):
            return "snapshot conversations=\(s.conversations) members=\(s.members) typing=\(s.typing)"
        case .stats(let s):
            return
                "stats lines=\(s.lines) commands=\(s.commands) errors=\(s.errors) conversations=\(s.conversations) members=\(s.members) typing=\(s.typing) events=\(s.events)"
        }
    }
}

/// Shorthand for an identifier.
func ID(_ text: String) -> Identifier { Identifier(text) }
