import Testing
import TypingCore
import TypingTestSupport

@Suite("Hash indexes and identifiers")
struct IndexTableTests {
    @Test("finds what was inserted and nothing else, through growth, removal and shrinking", .seedOnFailure)
    func againstDictionary() {
        var table = IndexTable()
        var keys: [Identifier] = []
        var reference: [Identifier: UserIndex] = [:]
        let seed: UInt64 = 42
        var rng = SplitMix64.replayable()
        for round in 0..<4 {
            for n in 0..<3000 {
                let id = Identifier("r\(round)-\(n)-\(UInt32.random(in: 0...9, using: &rng))")
                if reference[id] != nil { continue }
                let record = UserIndex(rawValue: Int32(keys.count))
                keys.append(id)
                reference[id] = record
                table.insert(hash: id.hash(seed: seed), record: record)
            }
            for (id, record) in reference where Int(record.rawValue) % 3 != round % 3 {
                table.remove(hash: id.hash(seed: seed), record: record)
                reference[id] = nil
            }
            #expect(table.count == reference.count)
            for (index, id) in keys.enumerated() {
                let found = table.find(hash: id.hash(seed: seed)) { (record: UserIndex) in
                    keys[Int(record.rawValue)] == id
                }
                #expect(found == reference[id], "key \(index)")
                _ = index
            }
        }
        for (id, record) in reference { table.remove(hash: id.hash(seed: seed), record: record) }
        #expect(table.count == 0)
        #expect(table.slots.count == IndexTable.minimumCapacity, "an emptied table shrinks back")
    }

    @Test("identifiers compare and hash by bytes, inline or spilled", arguments: [0, 1, 8, 15, 16, 17, 40, 256])
    func identifiers(length: Int) {
        let text = String((0..<length).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
        let a = Identifier(text), b = Identifier(text)
        #expect(a == b && a.hash(seed: 7) == b.hash(seed: 7) && a.hashValue == b.hashValue)
        #expect(a.string == text && a.byteCount == length)
        #expect(Identifier(text + "x") != a)
        if length > 0 {
            var changed = Array(text.utf8)
            changed[length - 1] ^= 1
            let other = Identifier(String(decoding: changed, as: UTF8.self))
            #expect(other != a, "the last byte counts")
            // Hashed by every byte too: a spilled id's bytes past the inline 16 count.
            #expect(
                other.hashValue != a.hashValue && other.hash(seed: 7) != a.hash(seed: 7),
                "the last byte counts in the hashes")
            var set: Set<Identifier> = [a, other]
            set.insert(b)
            #expect(set.count == 2)
        }
        #expect(Identifier("e\u{301}") != Identifier("\u{E9}"))
        #expect(Identifier("a\"b").needsEscaping && Identifier("a\nb").needsEscaping && !a.needsEscaping)
    }
}

@Suite("Identifier escape flag")
struct IdentifierEscapeTests {
    @Test("every byte value at every inline position and length gets the right flag")
    func exhaustive() {
        for length in 1...17 {
            for position in 0..<length {
                for value in 0...255 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = UInt8(value)
                    let id = bytes.withUnsafeBytes { Identifier(bytes: $0) }
                    // Controls, quote, backslash, DEL and the lead bytes of U+0080–U+00BF
                    // U+0600–U+063F (U+061C, in text) and U+2000–U+2FFF send the writers to their careful path.
                    let expected = value < 0x20 || [0x22, 0x5C, 0x7F, 0xC2, 0xD8, 0xE2].contains(value)
                    if id.needsEscaping != expected {
                        Issue.record("length \(length), byte \(value) at \(position): flag \(id.needsEscaping)")
                        return
                    }
                }
            }
        }
    }
}
