import Testing
import TypingCore

/// The bound on one phrase: a table whose worst-case phrase (every
/// activity's clause, every name as long as a display name can be, escapes counted)
/// is over ``PhraseTable/maxPhraseBytes`` is refused when it is made, naming the key;
/// one just under it is taken, and no phrase it renders is longer.
@Suite("Phrase bound")
struct PhraseBoundTests {
    static let english = PhraseTable.english

    /// English with `clause` and subject `1` replaced.
    static func table(clause: String, one: String? = nil) throws(PhraseTable.Error) -> PhraseTable {
        var names = english.names
        if let one { names["1"] = .plain(one) }
        return try PhraseTable(
            locale: "xx", plural: english.plural, names: names, verbs: english.verbs,
            clause: clause, separator: english.separator, end: english.end)
    }

    @Test("{names} × 70,000 in the clause and {0} × 100,000 in names.1: refused, naming names.1")
    func multipliedNames() {
        let clause = String(repeating: "{names}", count: 70_000) + "{verb}"
        let one = String(repeating: "{0}", count: 100_000)
        do {
            _ = try Self.table(clause: clause, one: one)
            Issue.record("a table whose phrase could take ~10^15 bytes was accepted")
        } catch {
            #expect(error.key == "names.1", "\(error)")
            #expect(error.message.contains("\(PhraseTable.maxPhraseBytes)"), "\(error)")
        }
    }

    @Test("the clause alone repeating {names}, or a subject alone repeating {0}: the key that repeats is named")
    func blame() {
        for (clause, one, key) in [
            (String(repeating: "{names}", count: 2_000) + "{verb}", "{0}", "clause"),
            ("{names} {verb}", String(repeating: "{0}", count: 2_000), "names.1"),
            ("{names} {verb}" + String(repeating: "x", count: PhraseTable.maxPhraseBytes), "{0}", "clause")
        ] {
            do {
                _ = try Self.table(clause: clause, one: one)
                Issue.record("\(key): accepted")
            } catch {
                #expect(error.key == key, "\(error)")
            }
        }
        var verbs = Self.english.verbs
        verbs[.sendingFile] = .plural([
            .one: "sends", .other: String(repeating: "é", count: PhraseTable.maxPhraseBytes / 7)
        ])
        do {
            _ = try PhraseTable(
                locale: "xx", plural: Self.english.plural, names: Self.english.names, verbs: verbs,
                clause: Self.english.clause, separator: Self.english.separator, end: Self.english.end)
            Issue.record("a verb of 2/7 of the bound: accepted")
        } catch {
            #expect(error.key == "verbs.sending_file.other", "\(error)")
        }
    }

    @Test("built-in English is far under the bound")
    func englishMargin() {
        #expect(Self.english.phraseBound > 0)
        #expect(Self.english.phraseBound * 2 < PhraseTable.maxPhraseBytes, "\(Self.english.phraseBound)")
    }

    @Test("a table just under the bound is taken and renders at most the bound; one byte more per clause is refused")
    func justUnder() throws {
        let room = PhraseTable.maxPhraseBytes - Self.english.phraseBound
        let pad = room / Activity.phrased.count
        let table = try Self.table(clause: "{names} {verb}" + String(repeating: "x", count: pad))
        #expect(table.phraseBound <= PhraseTable.maxPhraseBytes)
        #expect(table.phraseBound > PhraseTable.maxPhraseBytes - Activity.phrased.count)
        // Every activity's clause, three names each of the longest display name,
        // each byte of which JSON escapes (`"`), and names longer than that.
        for length in [PhraseTable.maxDisplayNameBytes, 50_000] {
            let name = String(repeating: "\"", count: length)
            var bytes: [UInt8] = []
            for (index, activity) in Activity.phrased.enumerated() {
                if index > 0 { table.appendSeparator(into: &bytes) }
                table.appendClause(
                    count: 3, shown: 3, activity: activity, names: .init([name, name, name]), into: &bytes)
            }
            table.appendEnd(into: &bytes)
            #expect(PhraseTable.jsonBound(bytes) <= PhraseTable.maxPhraseBytes, "\(length): \(bytes.count)")
            #expect(bytes.count > PhraseTable.maxPhraseBytes / 3, "\(length): \(bytes.count)")
        }
        do {
            _ = try Self.table(clause: "{names} {verb}" + String(repeating: "x", count: pad + 1))
            Issue.record("a table one byte per clause over the bound was accepted")
        } catch {
            #expect(error.key == "clause", "\(error)")
        }
    }

    @Test("a table whose worst case is exactly the bound is taken; one byte more is refused")
    func exactlyAtTheBound() throws {
        let room = PhraseTable.maxPhraseBytes - Self.english.phraseBound
        let pad = room / Activity.phrased.count, rest = room % Activity.phrased.count
        func table(end extra: Int) throws(PhraseTable.Error) -> PhraseTable {
            try PhraseTable(
                locale: "xx", plural: Self.english.plural, names: Self.english.names, verbs: Self.english.verbs,
                clause: "{names} {verb}" + String(repeating: "x", count: pad), separator: Self.english.separator,
                end: Self.english.end + String(repeating: "x", count: extra))
        }
        #expect(try table(end: rest).phraseBound == PhraseTable.maxPhraseBytes)
        #expect(throws: PhraseTable.Error.self) { try table(end: rest + 1) }
    }

    @Test("a name longer than a display name can be is cut at a character, never mid-UTF-8")
    func longNameCut() {
        var bytes: [UInt8] = []
        let name = "a" + String(repeating: "\u{301}", count: 3_000) // 6,001 bytes, one grapheme
        Self.english.appendClause(count: 1, shown: 1, activity: .typing, names: .init([name]), into: &bytes)
        let text = String(validating: bytes, as: UTF8.self)
        #expect(text != nil)
        #expect(bytes.count <= PhraseTable.maxDisplayNameBytes + " is typing".utf8.count, "\(bytes.count)")
        #expect(bytes.reversed().starts(with: Array("\u{301} is typing".utf8).reversed()))
    }
}
