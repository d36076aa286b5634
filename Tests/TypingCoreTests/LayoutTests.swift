import Testing
import TypingCore

/// The record sizes the documentation states (bench/RESULTS.md, the records' own
/// comments): a change that grows one fails here first.
@Suite("Record layouts")
struct LayoutTests {
    @Test("a user record fits one 64-byte cache line")
    func user() {
        #expect(MemoryLayout<UserRecord>.stride == 64)
    }

    @Test("a member slot is 56 bytes (with its screen, table and link), a membership link 12")
    func member() {
        #expect(MemoryLayout<MemberSlot>.stride == 56)
        #expect(MemoryLayout<MembershipLink>.stride == 12)
    }

    @Test("an index slot is 8 bytes; an id's inline part 24")
    func index() {
        #expect(MemoryLayout<Identifier.Fingerprint>.stride == 24)
        #expect(MemoryLayout<UInt64>.stride * IndexTable.minimumCapacity == 128)
    }

    @Test("a streak record is 168 bytes (it holds its links in the typer tree and in its activity's)")
    func streak() {
        #expect(MemoryLayout<StreakRecord>.stride == 168)
    }

    @Test(
        "a command is at most 128 bytes, so that the compiler copies it inline (past that, every copy of a decoded line was a call to memcpy: 1.5 % of W1)"
    )
    func command() {
        #expect(MemoryLayout<Command>.size <= 128)
    }
}
