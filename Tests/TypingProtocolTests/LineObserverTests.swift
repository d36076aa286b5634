import Testing
import TypingCore
import TypingProtocol

/// A session's ``LineObserver``: told of each applied command before the engine
/// applies it, once the timeouts due by the command's time have fired, and of the
/// end of every non-blank line, refused ones included.
@Suite("A session's line observer")
struct LineObserverTests {
    /// What happened, in order: events as the format encodes them, and the
    /// observer's calls.
    final class Log {
        var entries: [String] = []
    }

    struct LoggingFormat: EventFormat, ~Copyable {
        var json = JSONFormat()
        let log: Log

        mutating func encode(_ event: Event, into buffer: inout OutputBuffer) {
            if case .indicator(let indicator) = event {
                log.entries.append("indicator \(indicator.viewer) \(indicator.view.typerCount)")
            }
            json.encode(event, into: &buffer)
        }
    }

    struct Observer: LineObserver {
        let log: Log

        mutating func lineBegins(_ command: Command) {
            log.entries.append("begins " + String(describing: command).prefix { $0 != "(" })
        }

        mutating func lineEnded() {
            log.entries.append("ended")
        }
    }

    static func run(_ text: String) throws -> [String] {
        let log = Log()
        var configuration = SessionConfiguration()
        configuration.clock = .manual
        configuration.drain = false
        var session = Session(
            configuration: configuration, format: LoggingFormat(log: log), sink: [UInt8](),
            observer: Observer(log: log))
        _ = try Array(text.utf8).withUnsafeBytes { try session.feed($0) }
        try session.finish()
        return log.entries
    }

    @Test("the timeout due by a command's time is written before the observer hears of the command")
    func timeoutsFireFirst() throws {
        let entries = try Self.run(
            """
            {"cmd":"join","conv":"c","user":"ana","at":0}
            {"cmd":"join","conv":"c","user":"bo","at":0}
            {"cmd":"type","conv":"c","user":"ana","timeout_ms":1000,"at":10}
            {"cmd":"send","conv":"c","user":"bo","at":5000}

            """)
        // bo saw ana typing, then (her streak over at 1010) nobody: before the send.
        let send = try #require(entries.firstIndex(of: "begins send"))
        #expect(entries[..<send].suffix(2) == ["ended", "indicator bo 0"], "\(entries)")
        #expect(
            entries.filter { $0.hasPrefix("begins") } == ["begins join", "begins join", "begins type", "begins send"])
    }

    @Test("a refused line and a line too long end without beginning; blank lines are not lines")
    func refusedLinesEnd() throws {
        let entries = try Self.run("{\"cmd\":\"fly\"}\n \t \n{\"cmd\":\"join\",\"conv\":\"c\",\"user\":\"ana\"}\n")
        #expect(entries == ["ended", "begins join", "ended"], "\(entries)")
    }
}
