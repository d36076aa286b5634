import Testing
@testable import TypingCore

/// The record sizes the documentation states (bench/README.md, the records' own
/// comments): a change that grows one fails here first.
@Suite("Record layouts")
struct LayoutTests {
    @Test("a user record fits one 64-byte cache line")
    func user() {
        #expect(MemoryLayout<UserRecord>.stride == 64)
    }

    @Test("a member slot is 40 bytes")
    func member() {
        #expect(MemoryLayout<MemberSlot>.stride == 40)
    }

    @Test("an index slot is 8 bytes; an id's inline part 24")
    func index() {
        #expect(MemoryLayout<Identifier.Fingerprint>.stride == 24)
        #expect(MemoryLayout<UInt64>.stride * IndexTable.minimumCapacity == 128)
    }

    @Test("a streak record is 144 bytes (it holds its links in the typer tree)")
    func streak() {
        #expect(MemoryLayout<StreakRecord>.stride == 144)
    }
}
