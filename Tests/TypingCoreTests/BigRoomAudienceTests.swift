import Testing
import TypingCore

/// Rooms whose slot sets need every level: past 64 slots (the inline word), 4,096
/// (a second summary level) and 262,144 (a third), with receiving members at each
/// boundary, silent ones between, and compaction when most leave.
@Suite("Main-timeline audiences of big rooms")
struct BigRoomAudienceTests {
    /// The slots whose members receive typing: each side of every level's boundary.
    static let receiving: Set<Int> = [0, 1, 62, 63, 64, 65, 127, 128, 4_095, 4_096, 4_097, 262_143, 262_144, 262_145]
    static let size = 262_150

    /// The viewers a keystroke by `typer` wrote to.
    static func viewers(_ events: [String]) -> Set<String> {
        Set(
            events.compactMap { event in
                let words = event.split(separator: " ")
                return words.count > 2 && words[2].hasSuffix(":") ? String(words[2].dropLast()) : nil
            })
    }

    @Test(
        "a keystroke reaches exactly the receiving members, across every level, before and after compaction",
        arguments: [EngineConfiguration.Audience.members, .open])
    func levels(audience: EngineConfiguration.Audience) {
        var h = Harness(EngineConfiguration(maxMembers: 300_000, audience: audience), checksEveryStep: false)
        for slot in 0..<Self.size {
            let receives = Self.receiving.contains(slot)
            h.run(
                .join(conv: ID("room"), user: ID("m\(slot)"), name: "M\(slot)", receiveTyping: receives ? nil : false))
            if audience == .open && (receives || slot % 3 == 0) { h.run(.open(conv: ID("room"), user: ID("m\(slot)"))) }
        }
        var time = 10
        func check(_ typer: Int, expected: Set<Int>) {
            time += 10
            let started = Self.viewers(h.run(.type(conv: ID("room"), user: ID("m\(typer)")), at: time))
            #expect(started == Set(expected.subtracting([typer]).map { "m\($0)" }), "typer \(typer)")
            time += 10
            let stopped = Self.viewers(h.run(.send(conv: ID("room"), user: ID("m\(typer)")), at: time))
            #expect(stopped == started)
        }
        check(1, expected: Self.receiving)
        check(5, expected: Self.receiving)
        // Most leave: vacant slots are compacted (more than once), and the
        // receiving members move to new slots.
        for slot in 2..<Self.size where !Self.receiving.contains(slot) && slot % 97 != 0 {
            h.run(.leave(conv: ID("room"), user: ID("m\(slot)")))
        }
        h.engine.checkInvariants()
        check(97, expected: Self.receiving)
        // Some stop receiving, some at the top start; one moves to a thread.
        h.run(.user(user: ID("m4096"), receiveTyping: false))
        h.run(.user(user: ID("m262144"), receiveTyping: false))
        h.run(.user(user: ID("m194"), receiveTyping: true))
        h.run(.open(conv: ID("room"), user: ID("m194")))
        h.run(.open(conv: ID("room"), user: ID("m63"), thread: ID("t")))
        var now = Self.receiving.subtracting([4_096, 262_144, 63])
        now.insert(194)
        h.engine.checkInvariants()
        check(0, expected: now)
        // Everyone who receives leaves but one: the room keeps its silent members.
        for slot in now where slot != 0 && slot != 1 { h.run(.leave(conv: ID("room"), user: ID("m\(slot)"))) }
        h.engine.checkInvariants()
        check(1, expected: [0])
    }
}
