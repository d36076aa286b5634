import CJansson
import TypingCore

/// Phrase tables as JSON files (Protocol.md#languages): reading one, strictly, with
/// an error that names the key at fault; and writing one back, compactly, as a
/// record keeps them.
public enum PhraseTableFile {
    /// The most bytes a table file may have.
    public static let maxBytes = 1 << 20

    /// Reads the table in `bytes` (one JSON object, as a file holds it). Any key
    /// but `locale`, `plural`, `names`, `verbs`, `clause`, `separator` and `end`,
    /// a missing key, a value of the wrong type, a bad plural condition or a bad
    /// template is an error naming the key. `names` may hold the optional
    /// `several` besides its nine required subjects.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(PhraseTable.Error) -> PhraseTable {
        guard bytes.count <= maxBytes else {
            throw PhraseTable.Error(
                key: PhraseTable.Error.wholeTable,
                message: "it is \(bytes.count) bytes long; a table may have at most \(maxBytes)")
        }
        if Bytes.firstIndex(of: 0, in: bytes) != nil {
            throw PhraseTable.Error(
                key: PhraseTable.Error.wholeTable, message: "it holds a NUL byte, which JSON text cannot contain")
        }
        guard let base = bytes.baseAddress else {
            throw PhraseTable.Error(key: PhraseTable.Error.wholeTable, message: "it is empty; a table is a JSON object")
        }
        var error = json_error_t()
        guard
            let root = json_loadb(
                base.assumingMemoryBound(to: CChar.self), bytes.count, Int(JSON_REJECT_DUPLICATES), &error)
        else {
            let report = CommandDecoder.report(error, line: Int(error.line))
            throw PhraseTable.Error(key: PhraseTable.Error.wholeTable, message: "line \(error.line): \(report.message)")
        }
        defer { json_decref(root) }
        guard cj_is_object(root) != 0 else {
            throw PhraseTable.Error(
                key: PhraseTable.Error.wholeTable, message: "a table is a JSON object, not \(JSONValue.describe(root))")
        }
        let known = ["locale", "plural", "names", "verbs", "clause", "separator", "end"]
        for key in keys(of: root) where !known.contains(key) {
            throw PhraseTable.Error(
                key: key, message: "is not a key of a table; the keys are \(known.joined(separator: ", "))")
        }
        let locale = try string(root, "locale", path: "locale")
        var plural = PluralRules.none
        if let rules = json_object_get(root, "plural") {
            guard cj_is_object(rules) != 0 else {
                throw PhraseTable.Error(
                    key: "plural",
                    message: "must be an object from plural categories to conditions, not \(JSONValue.describe(rules))")
            }
            var conditions: [PluralCategory: String] = [:]
            for key in keys(of: rules) {
                guard let category = PluralCategory(rawValue: key) else {
                    throw PhraseTable.Error(
                        key: "plural.\(key)", message: "is not a plural category; they are \(categoryList)")
                }
                conditions[category] = try string(rules, key, path: "plural.\(key)")
            }
            do {
                plural = try PluralRules(conditions)
            } catch {
                throw PhraseTable.Error(key: "plural.\(error.category ?? "")", message: error.message)
            }
        }
        guard let namesObject = json_object_get(root, "names"), cj_is_object(namesObject) != 0 else {
            throw PhraseTable.Error(
                key: "names",
                message: json_object_get(root, "names") == nil
                    ? "is missing; a table needs the subjects \(PhraseTable.nameKeys.joined(separator: ", "))"
                    : "must be an object from \(PhraseTable.nameKeys.joined(separator: ", ")) (and, optional, \(PhraseTable.severalKey)) to templates"
            )
        }
        var names: [String: PhraseTable.Text] = [:]
        for key in keys(of: namesObject) {
            guard let value = json_object_get(namesObject, key) else { continue }
            names[key] = try text(value, path: "names.\(key)")
        }
        guard let verbsObject = json_object_get(root, "verbs"), cj_is_object(verbsObject) != 0 else {
            throw PhraseTable.Error(
                key: "verbs",
                message: json_object_get(root, "verbs") == nil
                    ? "is missing; a table needs a verb for each of \(Activity.phrasedList)"
                    : "must be an object from \(Activity.phrasedList) to verbs")
        }
        var verbs: [Activity: PhraseTable.Text] = [:]
        for key in keys(of: verbsObject) {
            guard let activity = Activity(name: key) else {
                throw PhraseTable.Error(
                    key: "verbs.\(key)", message: "is not an activity with a verb; they are \(Activity.phrasedList)")
            }
            guard let value = json_object_get(verbsObject, key) else { continue }
            verbs[activity] = try text(value, path: "verbs.\(key)")
        }
        let clause = try string(root, "clause", path: "clause")
        let separator = try string(root, "separator", path: "separator")
        let end = try string(root, "end", path: "end")
        return try PhraseTable(
            locale: locale, plural: plural, names: names, verbs: verbs, clause: clause,
            separator: separator, end: end)
    }

    /// The table as compact JSON, keys in the order the format lists them: what
    /// ``decode(_:)`` reads back as an equal table.
    public static func encode(_ table: PhraseTable) -> [UInt8] {
        var out = OutputBuffer(capacity: 1024)
        out.append("{\"locale\":")
        out.jsonString(table.locale)
        if !table.plural.sources.isEmpty {
            out.append(",\"plural\":{")
            for (index, category) in table.plural.sources.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.jsonString(category.rawValue)
                out.append(UInt8(ascii: ":"))
                out.jsonString(table.plural.sources[category] ?? "")
            }
            out.append("}")
        }
        out.append(",\"names\":{")
        for (index, key) in PhraseTable.nameKeys.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.jsonString(key)
            out.append(UInt8(ascii: ":"))
            encode(table.names[key] ?? .plain(""), into: &out)
        }
        if let several = table.names[PhraseTable.severalKey] {
            out.append(UInt8(ascii: ","))
            out.jsonString(PhraseTable.severalKey)
            out.append(UInt8(ascii: ":"))
            encode(several, into: &out)
        }
        out.append("},\"verbs\":{")
        for (index, activity) in Activity.phrased.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.jsonString(activity.name)
            out.append(UInt8(ascii: ":"))
            encode(table.verbs[activity] ?? .plain(""), into: &out)
        }
        out.append("},\"clause\":")
        out.jsonString(table.clause)
        out.append(",\"separator\":")
        out.jsonString(table.separator)
        out.append(",\"end\":")
        out.jsonString(table.end)
        out.append("}")
        return out.bytes
    }

    private static func encode(_ text: PhraseTable.Text, into out: inout OutputBuffer) {
        switch text {
        case .plain(let string):
            out.jsonString(string)
        case .plural(let forms):
            out.append(UInt8(ascii: "{"))
            for (index, category) in forms.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.jsonString(category.rawValue)
                out.append(UInt8(ascii: ":"))
                out.jsonString(forms[category] ?? "")
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let categoryList = PluralCategory.allCases.map(\.rawValue).joined(separator: ", ")

    /// The keys of `object`, in the order they were read.
    private static func keys(of object: UnsafeMutablePointer<json_t>) -> [String] {
        var keys: [String] = []
        var iterator = json_object_iter(object)
        while let current = iterator {
            if let key = json_object_iter_key(current) { keys.append(String(cString: key)) }
            iterator = json_object_iter_next(object, current)
        }
        return keys
    }

    /// The string at `key` of `object` (required).
    private static func string(
        _ object: UnsafeMutablePointer<json_t>, _ key: String,
        path: String
    ) throws(PhraseTable.Error) -> String {
        guard let value = json_object_get(object, key) else {
            throw PhraseTable.Error(key: path, message: "is missing")
        }
        guard cj_is_string(value) != 0 else {
            throw PhraseTable.Error(key: path, message: "must be a string, not \(JSONValue.describe(value))")
        }
        return String(decoding: JSONValue.bytes(ofString: value), as: UTF8.self)
    }

    /// A string, or an object from plural categories to strings.
    private static func text(_ value: UnsafeMutablePointer<json_t>, path: String) throws(PhraseTable.Error)
        -> PhraseTable.Text
    {
        if cj_is_string(value) != 0 {
            return .plain(String(decoding: JSONValue.bytes(ofString: value), as: UTF8.self))
        }
        guard cj_is_object(value) != 0 else {
            throw PhraseTable.Error(
                key: path,
                message:
                    "must be a string, or an object from plural categories to strings, not \(JSONValue.describe(value))"
            )
        }
        var forms: [PluralCategory: String] = [:]
        for key in keys(of: value) {
            guard let category = PluralCategory(rawValue: key) else {
                throw PhraseTable.Error(
                    key: "\(path).\(key)", message: "is not a plural category; they are \(categoryList)")
            }
            forms[category] = try string(value, key, path: "\(path).\(key)")
        }
        return .plural(forms)
    }
}
