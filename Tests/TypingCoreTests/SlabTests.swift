import Testing
import TypingCore

@Suite("Slab storage")
struct SlabTests {
    @Test("numbers are reused, live records kept, and the storage shrinks as records go")
    func lifecycle() {
        var slab = Slab<String, UserIndex>(vacant: "")
        let numbers = (0..<1000).map { slab.insert("r\($0)") }
        #expect(numbers == (0..<1000).map { UserIndex(rawValue: Int32($0)) })
        for number in numbers where number.rawValue % 2 == 0 { slab.remove(number) }
        #expect(slab.count == 500 && slab.records.count == 1000)
        #expect(!slab.contains(numbers[0]) && slab.contains(numbers[1]) && slab[numbers[1]] == "r1")
        let reused = slab.insert("new")
        #expect(reused.rawValue % 2 == 0 && reused.rawValue < 1000, "a freed number is reused")
        for number in numbers where number.rawValue % 2 == 1 { slab.remove(number) }
        slab.remove(reused)
        #expect(slab.count == 0 && slab.records.isEmpty, "free records at the end are dropped")
        #expect(slab.records.capacity < 64, "and the storage is given back")
        #expect(slab.insert("again") == numbers[0])
    }

    @Test("the engine forgets everything when everyone leaves")
    func engineReleases() {
        var h = Harness(checksEveryStep: false)
        for c in 0..<300 { h.join("c\(c)", "a\(c)", "b\(c)", "shared") }
        h.type("c7", "a7", at: 1)
        for c in 0..<300 {
            for user in ["a\(c)", "b\(c)", "shared"] { h.run(.leave(conv: ID("c\(c)"), user: ID(user))) }
        }
        #expect(h.engine.conversations.records.isEmpty && h.engine.users.records.isEmpty)
        #expect(h.engine.conversationIndex.slots.count == IndexTable.minimumCapacity)
        #expect(h.engine.userIndex.slots.count == IndexTable.minimumCapacity)
        #expect(h.engine.streakIndex.count == 0 && h.engine.streaks.records.isEmpty)
    }
}
