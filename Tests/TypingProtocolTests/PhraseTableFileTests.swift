import Foundation
import Testing
import TypingCore
import TypingProtocol

/// Phrase table files (Protocol.md#languages): the tables the project ships in
/// `phrases/` load and phrase every case; a wrong table is refused with the key at
/// fault; a table written back reads back the same.
@Suite("Phrase table files")
struct PhraseTableFileTests {
    /// The repository's `phrases/` folder.
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("phrases")

    static let shipped: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { $0.hasSuffix(".json") }.sorted()

    static func decode(_ text: String) throws(PhraseTable.Error) -> PhraseTable {
        let bytes = Array(text.utf8)
        let result: Result<PhraseTable, PhraseTable.Error> = bytes.withUnsafeBytes { raw in
            Result { () throws(PhraseTable.Error) in try PhraseTableFile.decode(raw) }
        }
        return try result.get()
    }

    @Test("the project ships tables for de, es, fr, pt, ru, ar, ja and zh")
    func shippedLanguages() {
        #expect(
            Self.shipped == ["ar.json", "de.json", "es.json", "fr.json", "ja.json", "pt.json", "ru.json", "zh.json"])
    }

    @Test("every shipped table loads, and phrases every subject, verb and plural form", arguments: shipped)
    func everyCell(file: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.folder.appendingPathComponent(file)))
        let table = try bytes.withUnsafeBytes { raw throws(PhraseTable.Error) in try PhraseTableFile.decode(raw) }
        #expect(table.locale == String(file.dropLast(5)))
        let names = ["Ana", "Ben", "Cy"]
        // Counts that reach every category of every shipped language.
        let counts = [1, 2, 3, 4, 5, 11, 12, 21, 22, 100, 101, 102, 111, 1_000_000]
        var sentences = Set<String>()
        for activity in Activity.phrased {
            for shown in 0...3 {
                for rest in [0, 1] + counts where !(shown == 0 && rest == 0) && !(shown == 3 && rest > 0) {
                    var bytes: [UInt8] = []
                    table.appendClause(
                        count: shown + rest, shown: shown, activity: activity, names: .init(names), into: &bytes)
                    table.appendEnd(into: &bytes)
                    let text = String(decoding: bytes, as: UTF8.self)
                    #expect(
                        !text.contains("{") && !text.contains("}"), "\(file) \(activity.name) \(shown)+\(rest): \(text)"
                    )
                    for name in names.prefix(shown) { #expect(text.contains(name), "\(file): \(text)") }
                    sentences.insert(text)
                }
            }
        }
        // At least one sentence of its own for every activity and subject.
        #expect(
            sentences.count >= Activity.phrased.count * PhraseTable.nameKeys.count,
            "\(file): \(sentences.count) different sentences")
        // And as typingd writes it: two clauses, joined and ended.
        var two: [UInt8] = []
        table.appendClause(count: 1, shown: 1, activity: .typing, names: .init(["Ana"]), into: &two)
        table.appendSeparator(into: &two)
        table.appendClause(count: 2, shown: 1, activity: .recordingAudio, names: .init(["Ben"]), into: &two)
        table.appendEnd(into: &two)
        #expect(
            String(decoding: two, as: UTF8.self).contains("Ana") && String(decoding: two, as: UTF8.self).contains("Ben")
        )
    }

    @Test("every shipped table's worst-case phrase is far under the bound on one phrase", arguments: shipped)
    func farUnderTheBound(file: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.folder.appendingPathComponent(file)))
        let table = try bytes.withUnsafeBytes { raw throws(PhraseTable.Error) in try PhraseTableFile.decode(raw) }
        #expect(table.phraseBound * 2 < PhraseTable.maxPhraseBytes, "\(file): \(table.phraseBound)")
    }

    @Test(
        "a 790,885-byte table with {names} × 70,000 in the clause and {0} × 100,000 in names.1 is refused, naming names.1"
    )
    func quadraticTable() {
        let text = Self.table { object in
            var names = object["names"] as? [String: Any] ?? [:]
            names["1"] = String(repeating: "{0}", count: 100_000)
            object["names"] = names
            object["clause"] = String(repeating: "{names}", count: 70_000) + "{verb}"
        }
        #expect(text.utf8.count > 790_000 && text.utf8.count < PhraseTableFile.maxBytes)
        do {
            _ = try Self.decode(text)
            Issue.record("accepted")
        } catch {
            #expect(error.key == "names.1", "\(error)")
            #expect(error.description.contains("at most \(PhraseTable.maxPhraseBytes)"), "\(error)")
        }
    }

    @Test("a table written back reads back equal", arguments: shipped)
    func roundTrip(file: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.folder.appendingPathComponent(file)))
        let table = try bytes.withUnsafeBytes { raw throws(PhraseTable.Error) in try PhraseTableFile.decode(raw) }
        let again = try PhraseTableFile.encode(table).withUnsafeBytes { raw throws(PhraseTable.Error) in
            try PhraseTableFile.decode(raw)
        }
        #expect(again == table)
        #expect(PhraseTableFile.encode(PhraseTable.english).count > 100)
    }

    /// A valid table's text, with `change` applied to its object.
    static func table(_ change: (inout [String: Any]) -> Void) -> String {
        var object: [String: Any] = [
            "locale": "xx",
            "plural": ["one": "n = 1"],
            "names": Dictionary(
                uniqueKeysWithValues: PhraseTable.nameKeys.map { key in
                    (
                        key,
                        (0..<Int(String(key.first!))!).map { "{\($0)}" }.joined(separator: " ")
                            + (key.contains("+") ? " +{r}" : "") + " x"
                    )
                }),
            "verbs": Dictionary(
                uniqueKeysWithValues: Activity.phrased.map { ($0.name, ["one": "does", "other": "do"]) }),
            "clause": "{names} {verb}", "separator": "; ", "end": "."
        ]
        change(&object)
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    @Test("a valid table loads")
    func valid() throws {
        let table = try Self.decode(Self.table { _ in })
        #expect(table.locale == "xx")
    }

    /// A wrong table: what is wrong, the key the error must name.
    static let wrong: [(String, String)] = [
        ("an unknown key", "colour"), ("no locale", "locale"), ("a bad tag", "locale"),
        ("a missing subject", "names.2+n"), ("an extra subject", "names.4"),
        ("a name the key does not show", "names.2+n"), ("a stray brace", "names.1"),
        ("a plural object without other", "verbs.typing"), ("an unknown category", "verbs.typing.several"),
        ("a placeholder in a verb", "verbs.sending_file.other"), ("a missing verb", "verbs.sharing_location"),
        ("an unknown activity", "verbs.dancing"), ("a bad condition", "plural.one"),
        ("an empty condition", "plural.few"),
        ("a number for a string", "end"), ("a null", "separator"), ("a clause placeholder", "clause"),
        ("a control character", "end"), ("a line separator", "names.3")
    ]

    /// The table with `what` wrong.
    static func wrongTable(_ what: String) -> String {
        table { object in
            var names = object["names"] as? [String: Any] ?? [:]
            var verbs = object["verbs"] as? [String: Any] ?? [:]
            switch what {
            case "an unknown key": object["colour"] = "red"
            case "no locale": object["locale"] = nil
            case "a bad tag": object["locale"] = "de_DE"
            case "a missing subject": names["2+n"] = nil
            case "an extra subject": names["4"] = "{0}"
            case "a name the key does not show": names["2+n"] = "{0}, {1}, {2} +{r}"
            case "a stray brace": names["1"] = "{0} }"
            case "a plural object without other": verbs["typing"] = ["one": "types"]
            case "an unknown category": verbs["typing"] = ["several": "x", "other": "y"]
            case "a placeholder in a verb": verbs["sending_file"] = ["other": "send {r} files"]
            case "a missing verb": verbs["sharing_location"] = nil
            case "an unknown activity": verbs["dancing"] = "dances"
            case "a bad condition": object["plural"] = ["one": "n = "]
            case "an empty condition": object["plural"] = ["few": ""]
            case "a number for a string": object["end"] = 3
            case "a null": object["separator"] = NSNull()
            case "a clause placeholder": object["clause"] = "{names} {0}"
            case "a control character": object["end"] = "\u{1B}[31m..."
            case "a line separator": names["3"] = "{0},\u{2028}{1} {2}"
            default: break
            }
            object["names"] = names
            object["verbs"] = verbs
        }
    }

    @Test("a wrong table is refused, naming the key", arguments: wrong)
    func refused(what: String, key: String) {
        do {
            _ = try Self.decode(Self.wrongTable(what))
            Issue.record("\(what): accepted")
        } catch {
            #expect(error.key == key, "\(what): \(error)")
        }
    }

    @Test("a key given twice, at the top or inside, is refused, even when both values are fine")
    func duplicateKeys() throws {
        let valid = Self.table { _ in }
        _ = try Self.decode(valid)
        #expect(valid.hasPrefix("{") && valid.contains(#""verbs":{"#))
        let twice = [
            #"{"end":"!","# + valid.dropFirst(),
            valid.replacingOccurrences(of: #""verbs":{"#, with: #""verbs":{"typing":"types","#)
        ]
        for text in twice {
            do {
                _ = try Self.decode(text)
                Issue.record("accepted: \(text.prefix(80))")
            } catch {
                #expect(error.message.contains("duplicate"), "\(error)")
            }
        }
    }

    @Test("text that is not a JSON object is refused, with where")
    func notJSON() {
        for text in ["", "[]", "{\"locale\": \"xx\",}", "{\"locale\":\"a\",\"locale\":\"b\"}"] {
            #expect(throws: PhraseTable.Error.self, "\(text)") { try Self.decode(text) }
        }
    }
}
