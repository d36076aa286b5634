import Testing
import TypingCore
import TypingProtocol
import TypingTestSupport

/// The bound on one command's output counts a table's `several` subject: with
/// `--several-after`, a clause may be phrased with it however short the others are.
@Suite("Output per line with --several-after")
struct OutputBoundSeveralTests {
    /// A table whose `several` is far longer than any other subject: 1,500 bytes that
    /// JSON escapes (`"`), and `{r}` three times.
    static let book: PhraseBook = {
        let long = String(repeating: "\\\"", count: 1_500)
        let text =
            #"{"locale":"xx","plural":{"one":"n = 1"},"names":{"0+1":"?","0+n":"{r}","1":"{0}","1+1":"{0}+","1+n":"{0}+{r}","2":"{0},{1}","2+1":"{0},{1}+","2+n":"{0},{1}+{r}","3":"{0},{1},{2}","several":{"one":"1","other":"{r}/{r}/{r} "#
            + long
            + #""}},"verbs":{"typing":"t","recording_audio":"a","recording_video":"v","sending_photo":"p","sending_video":"w","sending_file":"f","sharing_location":"l"},"clause":"{names} {verb}","separator":";","end":"."}"#
        let bytes = Array(text.utf8)
        let result: Result<PhraseTable, PhraseTable.Error> = bytes.withUnsafeBytes { raw in
            Result { () throws(PhraseTable.Error) in try PhraseTableFile.decode(raw) }
        }
        guard case .success(let table) = result, let book = try? PhraseBook(tables: [table], defaultLocale: "xx") else {
            preconditionFailure("test table: \(result)")
        }
        return book
    }()

    @Test("a room whose clauses are several never writes more than its bound, in one clause or several")
    func severalClauses() {
        var engine = Engine(configuration: EngineConfiguration(typingEvents: true, phrases: Self.book, severalAfter: 2))
        var events: [Event] = []
        let users = (0..<14).map { Identifier("u\($0)") }
        for (index, user) in users.enumerated() {
            engine.apply(
                Request(.join(conv: Identifier("g"), user: user, name: index % 3 == 0 ? nil : "N\(index)")), to: &events
            )
        }
        var severalWritten = false
        for (index, user) in users.prefix(12).enumerated() {
            let command = Command.type(conv: Identifier("g"), user: user, activity: Activity.allCases[index % 3])
            let bound = engine.outputBound(of: command)
            events.removeAll()
            engine.apply(Request(command, at: index, line: index + 1), to: &events)
            let written = OutputBoundTests.encodedSize(events)
            #expect(written <= bound, "keystroke \(index): wrote \(written) bytes, bound \(bound)")
            severalWritten = severalWritten || written > 3_000
        }
        #expect(severalWritten, "no clause was phrased with several")
    }

    @Test("random commands with --several-after 1 or 2 never write more than their bound", arguments: [1, 2])
    func random(limit: Int) {
        var generator = SplitMix64(seed: UInt64(limit))
        var engine = Engine(
            configuration: EngineConfiguration(
                style: .compact, listStyle: .group, phrases: Self.book,
                severalAfter: limit))
        let users = (0..<9).map { Identifier("user \($0)") }
        for step in 0..<3_000 {
            let conv = Identifier(["g", "h"][Int(generator.next() % 2)])
            let user = users[Int(generator.next() % UInt64(users.count))]
            let command: Command
            switch generator.next() % 8 {
            case 0: command = .join(conv: conv, user: user, name: generator.next() % 3 == 0 ? nil : "Name \(step % 7)")
            case 1: command = .open(conv: conv, user: user, view: generator.next() % 2 == 0 ? .list : .chat)
            case 2: command = generator.next() % 2 == 0 ? .leave(conv: conv, user: user) : .send(conv: conv, user: user)
            default: command = .type(conv: conv, user: user, activity: Activity.allCases[Int(generator.next() % 3)])
            }
            let bound = engine.outputBound(of: command)
            var events: [Event] = []
            engine.apply(Request(command, at: step, line: step + 1), to: &events)
            let written = OutputBoundTests.encodedSize(
                events.filter { if case .error = $0 { return false } else { return true } })
            #expect(written <= bound, "step \(step): \(command) wrote \(written) bytes, bound \(bound)")
            if written > bound { break }
        }
    }
}
