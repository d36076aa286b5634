import Foundation
import Testing
import TypingCore
import TypingProtocol

/// The optional `several` subject of a table file (Protocol.md#several-people):
/// a string or a plural object with `other`, whose only placeholder is `{r}`.
@Suite("Phrase table files: several")
struct SeveralTableFileTests {
    /// The valid test table of ``PhraseTableFileTests`` with `several` set to `value`
    /// (nil: left out).
    static func table(several value: Any?) -> String {
        PhraseTableFileTests.table { object in
            var names = object["names"] as? [String: Any] ?? [:]
            names["several"] = value
            object["names"] = names
        }
    }

    /// One clause of `count` typers phrased with `several` by `table`.
    static func several(_ table: PhraseTable, count: Int) -> String {
        var bytes: [UInt8] = []
        table.appendClause(count: count, shown: 0, activity: .typing, names: .init(), several: true, into: &bytes)
        table.appendEnd(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("a table without several loads, and phrases such a clause with its 0+n, r = n")
    func without() throws {
        let table = try PhraseTableFileTests.decode(
            PhraseTableFileTests.table { object in
                var names = object["names"] as? [String: Any] ?? [:]
                names["0+1"] = "one unnamed"
                names["0+n"] = ["one": "{r} in all (one)", "other": "{r} in all"]
                object["names"] = names
            })
        #expect(table.names["several"] == nil)
        #expect(Self.several(table, count: 5) == "5 in all do.")
        #expect(Self.several(table, count: 2) == "2 in all do.")
    }

    @Test("several as a string: nobody named, {r} is n, the verb for n")
    func string() throws {
        let table = try PhraseTableFileTests.decode(Self.table(several: "{r} (many)"))
        #expect(table.names["several"] == .plain("{r} (many)"))
        #expect(Self.several(table, count: 7) == "7 (many) do.")
        #expect(Self.several(try PhraseTableFileTests.decode(Self.table(several: "lots")), count: 2) == "lots do.")
    }

    @Test("several as a plural object: the form for n's category, other for the rest")
    func plural() throws {
        let table = try PhraseTableFileTests.decode(
            PhraseTableFileTests.table { object in
                var names = object["names"] as? [String: Any] ?? [:]
                names["several"] = ["few": "a few ({r})", "other": "many ({r})"]
                object["names"] = names
                object["plural"] = ["one": "n = 1", "few": "n = 3..4"]
            })
        #expect(table.names["several"] == .plural([.few: "a few ({r})", .other: "many ({r})"]))
        #expect(Self.several(table, count: 3) == "a few (3) do.")
        #expect(Self.several(table, count: 4) == "a few (4) do.")
        #expect(Self.several(table, count: 5) == "many (5) do.")
    }

    /// A wrong `several`: its value, the key the error must name, words its message must hold.
    static let wrong: [(value: String, key: String, says: String)] = [
        (#""{0} and others""#, "names.several", #"the placeholders here are {r}"#),
        (#""{names}""#, "names.several", "not a placeholder here"),
        (#""{r""#, "names.several", "never closed"),
        (#""r}""#, "names.several", "closes no placeholder"),
        (#"{"one":"someone"}"#, "names.several", #"needs "other""#),
        (#"{"lots":"x","other":"y"}"#, "names.several.lots", "not a plural category"),
        (#"{"few":"{1}","other":"y"}"#, "names.several.few", "not a placeholder here"),
        (#"{"other":"{2}"}"#, "names.several.other", "not a placeholder here"),
        (#"{"other":3}"#, "names.several.other", "must be a string"),
        ("3", "names.several", "must be a string"),
        ("null", "names.several", "must be a string"),
        (#"["Several"]"#, "names.several", "must be a string"),
        (#""Several\u0007""#, "names.several", "control character")
    ]

    @Test("a wrong several is refused, naming the key", arguments: wrong)
    func refused(value: String, key: String, says: String) {
        let valid = Self.table(several: "PLACEHOLDER")
        let text = valid.replacingOccurrences(of: #""PLACEHOLDER""#, with: value)
        #expect(text != valid)
        do {
            _ = try PhraseTableFileTests.decode(text)
            Issue.record("\(value): accepted")
        } catch {
            #expect(error.key == key, "\(value): \(error)")
            #expect(error.message.contains(says), "\(value): \(error)")
        }
    }

    @Test("a key like several but not it is still refused, and the message names several as optional")
    func otherKeys() {
        do {
            _ = try PhraseTableFileTests.decode(
                Self.table(several: nil).replacingOccurrences(of: #""names":{"#, with: #""names":{"Several":"x","#))
            Issue.record("accepted")
        } catch {
            #expect(error.key == "names.Several", "\(error)")
            #expect(error.message.contains("optional, several"), "\(error)")
        }
    }

    @Test("a table with several written back reads back equal, several included; one without gains none")
    func roundTrip() throws {
        for value in ["Several people", ["one": "x", "other": "{r} y"]] as [Any] {
            let table = try PhraseTableFileTests.decode(Self.table(several: value))
            let encoded = PhraseTableFile.encode(table)
            let again = try encoded.withUnsafeBytes { raw throws(PhraseTable.Error) in try PhraseTableFile.decode(raw) }
            #expect(again == table && again.names["several"] != nil)
        }
        let without = try PhraseTableFileTests.decode(Self.table(several: nil))
        #expect(!String(decoding: PhraseTableFile.encode(without), as: UTF8.self).contains("several"))
        #expect(
            String(decoding: PhraseTableFile.encode(.english), as: UTF8.self).contains(#""several":"Several people""#))
    }

    @Test("several counts in the worst-case phrase: a long one raises the bound, and one too long is refused naming it")
    func bound() throws {
        let without = try PhraseTableFileTests.decode(Self.table(several: nil))
        // 800 counts of 20 digits each: 16,000 bytes, well over the table's longest
        // other subject (`3`: three names of 2,052 bytes, escaped).
        let long = try PhraseTableFileTests.decode(Self.table(several: String(repeating: "{r}", count: 800)))
        #expect(long.phraseBound > without.phraseBound + 7 * 9_000, "\(without.phraseBound) → \(long.phraseBound)")
        do {
            _ = try PhraseTableFileTests.decode(Self.table(several: String(repeating: "\"", count: 10_000)))
            Issue.record("accepted")
        } catch {
            #expect(error.key == "names.several.other" || error.key == "names.several", "\(error)")
            #expect(error.message.contains("at most \(PhraseTable.maxPhraseBytes)"), "\(error)")
        }
    }

    @Test(
        "every shipped table has a several, with {r} at most, for every count", arguments: PhraseTableFileTests.shipped)
    func shipped(file: String) throws {
        let bytes = try [UInt8](Data(contentsOf: PhraseTableFileTests.folder.appendingPathComponent(file)))
        let table = try bytes.withUnsafeBytes { raw throws(PhraseTable.Error) in try PhraseTableFile.decode(raw) }
        #expect(table.names["several"] != nil, "\(file) has no several")
        var fallback = table.names
        fallback["several"] = nil
        let plain = try PhraseTable(
            locale: table.locale, plural: table.plural, names: fallback, verbs: table.verbs,
            clause: table.clause, separator: table.separator, end: table.end)
        for count in [2, 3, 4, 5, 11, 21, 22, 100, 101, 1_000_000] {
            let text = Self.several(table, count: count)
            #expect(!text.contains("{") && !text.contains("}") && !text.isEmpty, "\(file) \(count): \(text)")
            // From three on, "several" reads other than the count; two may be
            // the same (Arabic's dual, "two people", is both).
            if count >= 3 {
                #expect(text != Self.several(plain, count: count), "\(file) \(count): the same as 0+n: \(text)")
            }
        }
    }
}
