/// How one language phrases an indicator (Protocol.md#languages): the subject of a
/// clause by how many names it shows and how many people it counts, a verb per
/// activity, how they combine, and what joins and ends the clauses.
///
/// ```
/// subject:  "{0}, {1}, and {r} others"   (key "2+n": two names shown, r ≥ 2 counted)
/// verb:     "are typing"                 (activity typing, for the clause's n)
/// clause:   "{names} {verb}"
/// text:     clause; clause…  +  end "..."
/// ```
///
/// Subjects and verbs may have a form per plural category (``PluralRules``): a
/// subject's form is chosen by the category of r, a verb's by that of the clause's
/// n. Display names are inserted as they are; substitution is one pass, so a name
/// holding `{r}` stays as it is. An optional tenth subject, `several`, phrases a
/// clause of more typers than `--several-after` allows without naming anyone
/// (Protocol.md#several-people): `{r}` is the clause's n, and a table without it
/// uses its `0+n` with r = n. ``english`` is built in; with everyone typing it
/// gives exactly the phrases of Protocol.md#phrases.
///
/// A table's worst-case phrase is at most ``maxPhraseBytes``: a table over it is
/// refused when it is made, so that one phrase never grows with the square of its
/// table's size (`{names}` repeated in the clause, `{0}` in a subject).
public struct PhraseTable: Sendable, Equatable {
    /// A piece of text that may have a form per plural category.
    public enum Text: Sendable, Equatable {
        /// One form for every count.
        case plain(String)
        /// A form per category; `other` is required and serves the categories left out.
        case plural([PluralCategory: String])
    }

    /// What is wrong with a table: the key at fault (such as `names.2+n.other`) and
    /// why.
    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// The key at fault, dotted from the top of the table (`verbs.typing.one`).
        public var key: String
        /// What is wrong, for a person.
        public var message: String

        /// Creates an error for `key`.
        public init(key: String, message: String) {
            self.key = key
            self.message = message
        }

        /// The key of an error about the table as a whole (not JSON, too large, …).
        public static let wholeTable = "(file)"

        /// "key: message"; the message alone for the table as a whole; `""` for the
        /// empty key.
        public var description: String {
            key == Self.wholeTable ? message : "\(key.isEmpty ? "\"\"" : key): \(message)"
        }
    }

    /// The subjects' keys: how many names are shown (0–3), then `+1` when one more
    /// person is counted and `+n` when two or more are (r = 0 without a suffix).
    public static let nameKeys = ["0+1", "0+n", "1", "1+1", "1+n", "2", "2+1", "2+n", "3"]

    /// The optional subject of a clause of more typers than
    /// ``EngineConfiguration/severalAfter`` (Protocol.md#several-people): nobody
    /// named, `{r}` the clause's n, its form chosen by n's category.
    public static let severalKey = "several"

    /// Every key `names` may hold: the nine required ``nameKeys``, then the
    /// optional ``severalKey``.
    static let allNameKeys = nameKeys + [severalKey]

    /// The tag the table serves.
    public let locale: String
    /// The table's plural rules.
    public let plural: PluralRules
    /// The subjects, by key (``nameKeys``, and ``severalKey`` when given), as given.
    public let names: [String: Text]
    /// The verbs, by activity, as given.
    public let verbs: [Activity: Text]
    /// How a subject and a verb make a clause, with `{names}` and `{verb}`.
    public let clause: String
    /// Between clauses.
    public let separator: String
    /// After the last clause.
    public let end: String

    /// Compiled forms: subjects by key index, then category; verbs by activity,
    /// then category.
    private let subjectForms: [[Template]]
    /// The `several` subject by category; nil when the table has none (its `0+n`
    /// serves).
    private let severalForms: [Template]?
    private let verbForms: [[[UInt8]]]
    private let clauseTemplate: Template
    private let separatorBytes: [UInt8]
    private let endBytes: [UInt8]
    /// The most bytes a clause's own text takes in JSON output (subject and verb
    /// text, the clause's; names and counts aside), and the separator's and end's:
    /// for bounds on output.
    package let clauseBound: Int, separatorBound: Int, endBound: Int
    /// The most names and counts one clause inserts.
    package let clauseNames: Int, clauseCounts: Int
    /// The most bytes one phrase of this table can take in JSON output: a clause
    /// for every activity, each with its longest subject and verb, every name as
    /// long as a display name can be (``maxDisplayNameBytes``), every count 20
    /// digits, escapes counted (``jsonBound(_:)``); the separators and the end. At
    /// most ``maxPhraseBytes``: a table over it is refused.
    package let phraseBound: Int

    /// Checks and compiles a table. `names` needs exactly the nine ``nameKeys``, and
    /// may hold ``severalKey`` too; `verbs` needs an entry for every activity; a
    /// template may hold only the placeholders its key allows (`{0}`–`{2}` as many
    /// as the key shows and `{r}` in subjects, only `{r}` in `several`, `{names}`
    /// and `{verb}` in `clause`, none elsewhere), and no
    /// other `{` or `}`; and its worst-case phrase may take at most
    /// ``maxPhraseBytes`` (else the error names the key whose part of it is
    /// largest).
    public init(
        locale: String, plural: PluralRules = .none, names: [String: Text], verbs: [Activity: Text],
        clause: String, separator: String, end: String
    ) throws(Error) {
        guard PhraseTable.isLocaleTag(locale) else {
            throw Error(
                key: "locale",
                message: "\(Quote.string(locale)) is not a language tag (1–35 ASCII letters, digits and \"-\")")
        }
        for key in names.keys.sorted() where !PhraseTable.allNameKeys.contains(key) {
            throw Error(
                key: "names.\(key)",
                message:
                    "is not a key of \"names\"; the keys are \(PhraseTable.nameKeys.joined(separator: ", ")) and, optional, \(PhraseTable.severalKey)"
            )
        }
        var subjectForms: [[Template]] = []
        var longestSubject = 0, longestVerb = 0, subjectNames = 0, subjectCounts = 0
        // The worst case of one subject and of one verb, and the key of the form
        // that has it (for the bound on a phrase).
        var worstSubject = (bytes: 0, key: ""), worstVerb = (bytes: 0, key: "")
        var severalForms: [Template]?
        for key in PhraseTable.allNameKeys {
            let several = key == PhraseTable.severalKey
            guard let text = names[key] else {
                if several { continue }
                throw Error(
                    key: "names.\(key)",
                    message: "is missing; \"names\" needs all of \(PhraseTable.nameKeys.joined(separator: ", "))")
            }
            // A required key starts with how many names it shows; `several` shows none.
            let shown = several ? 0 : key.first?.wholeNumberValue ?? 0
            let allowed = (0..<shown).map { "{\($0)}" } + ["{r}"]
            let forms = try PhraseTable.forms(of: text, key: "names.\(key)") { source, key throws(Error) in
                let template = try Template(source, allowed: allowed, key: key)
                let bytes = PhraseTable.sum(
                    PhraseTable.jsonBound(template.literal),
                    PhraseTable.product(template.uses { $0 < Template.countSlot }, PhraseTable.nameJSONBytes),
                    PhraseTable.product(template.uses { $0 == Template.countSlot }, PhraseTable.maxCountBytes))
                if bytes > worstSubject.bytes { worstSubject = (bytes, key) }
                return template
            }
            longestSubject = max(longestSubject, forms.map { PhraseTable.jsonBound($0.literal) }.max() ?? 0)
            subjectNames = max(subjectNames, forms.map { $0.uses { $0 < Template.countSlot } }.max() ?? 0)
            subjectCounts = max(subjectCounts, forms.map { $0.uses { $0 == Template.countSlot } }.max() ?? 0)
            if several { severalForms = forms } else { subjectForms.append(forms) }
        }
        if verbs[.status] != nil {
            throw Error(
                key: "verbs.\(Activity.status.name)",
                message:
                    "is not a verb a table gives: a status clause's verb is the typer's own words; \"verbs\" has exactly \(Activity.phrasedList)"
            )
        }
        var verbForms: [[[UInt8]]] = []
        for activity in Activity.phrased {
            guard let text = verbs[activity] else {
                throw Error(
                    key: "verbs.\(activity.name)", message: "is missing; \"verbs\" needs all of \(Activity.phrasedList)"
                )
            }
            let forms = try PhraseTable.forms(of: text, key: "verbs.\(activity.name)") { source, key throws(Error) in
                let literal = try Template(source, allowed: [], key: key).literal
                let bytes = PhraseTable.jsonBound(literal)
                if bytes > worstVerb.bytes { worstVerb = (bytes, key) }
                return literal
            }
            longestVerb = max(longestVerb, forms.map { PhraseTable.jsonBound($0) }.max() ?? 0)
            verbForms.append(forms)
        }
        self.clauseTemplate = try Template(clause, allowed: ["{names}", "{verb}"], key: "clause")
        self.separatorBytes = try Template(separator, allowed: [], key: "separator").literal
        self.endBytes = try Template(end, allowed: [], key: "end").literal
        self.locale = locale
        self.plural = plural
        self.names = names
        self.verbs = verbs
        self.clause = clause
        self.separator = separator
        self.end = end
        self.subjectForms = subjectForms
        self.severalForms = severalForms
        self.verbForms = verbForms
        let namesUses = clauseTemplate.uses { $0 == Template.namesSlot }
        let verbUses = clauseTemplate.uses { $0 == Template.verbSlot }
        self.clauseBound =
            namesUses * longestSubject + verbUses * longestVerb + PhraseTable.jsonBound(clauseTemplate.literal)
        self.clauseNames = namesUses * subjectNames
        self.clauseCounts = namesUses * subjectCounts
        self.separatorBound = PhraseTable.jsonBound(separatorBytes)
        self.endBound = PhraseTable.jsonBound(endBytes)
        self.phraseBound = try PhraseTable.checkedPhraseBound(
            clause: PhraseTable.jsonBound(clauseTemplate.literal), namesUses: namesUses, verbUses: verbUses,
            subject: worstSubject, verb: worstVerb, separator: separatorBound, end: endBound)
    }

    /// The worst case of one phrase (see ``phraseBound``): `maxClauses` clauses of
    /// `clause` literal bytes, `namesUses` subjects and `verbUses` verbs each, the
    /// separators between them and the end.
    private static func checkedPhraseBound(
        clause: Int, namesUses: Int, verbUses: Int, subject: (bytes: Int, key: String),
        verb: (bytes: Int, key: String), separator: Int, end: Int
    ) throws(Error) -> Int {
        let clauses = maxClauses
        let subjects = product(namesUses, subject.bytes), verbs = product(verbUses, verb.bytes)
        let total = sum(product(clauses, sum(clause, subjects, verbs)), product(clauses - 1, separator), end)
        guard total > maxPhraseBytes else { return total }
        // Name the key whose part of the worst case is largest: a subject or verb
        // form that is too long even once per clause, else the clause when it is
        // what repeats them (or is too long itself), else the separator or the end.
        var blamed = (bytes: product(clauses, clause), key: "clause")
        for (part, uses) in [(subject, namesUses), (verb, verbUses)] {
            let bytes = product(clauses, product(uses, part.bytes))
            guard bytes > blamed.bytes else { continue }
            blamed = (bytes, uses > 1 && product(clauses, part.bytes) <= maxPhraseBytes ? "clause" : part.key)
        }
        if product(clauses - 1, separator) > blamed.bytes { blamed = (product(clauses - 1, separator), "separator") }
        if end > blamed.bytes { blamed = (end, "end") }
        let shown = total == .max ? "more than \(Int.max)" : String(total)
        throw Error(
            key: blamed.key,
            message:
                "one phrase could take \(shown) bytes with it (a clause for each of the \(clauses) activities, every name as long as a display name can be, \(maxDisplayNameBytes) bytes, JSON escapes counted); a phrase may take at most \(maxPhraseBytes)"
        )
    }

    /// The most bytes one phrase may take in JSON output, whatever the table and
    /// the names: 128 KiB. A table is refused when its longest possible phrase (a
    /// clause for every activity, each with its longest subject and verb, every
    /// name 1,026 bytes, escapes counted) is longer. Built-in English's worst case is
    /// about a third of it (three names of 1,026 bytes, escaped, in each of seven
    /// clauses), and so is that of every table the project ships.
    public static let maxPhraseBytes = 128 << 10

    /// The most bytes of a user's `name` the protocol takes (longer is refused when
    /// a line is decoded): 1024.
    public static let maxNameBytes = 1024

    /// The most bytes of a display name made from a name of at most
    /// ``maxNameBytes``: a name cut to 15 grapheme clusters lost one byte at least,
    /// and gained `...`. A longer name (only the engine's own API takes one) is cut
    /// to this many bytes, at a character, where a phrase inserts it.
    package static let maxDisplayNameBytes = maxNameBytes - 1 + DisplayName.ellipsis.utf8.count

    /// The most bytes a display name takes in JSON output: twice its bytes (it holds
    /// no control character; `"`, `\\` and U+2028/U+2029 at most double). The
    /// bound a table is loaded against counts JSON; `--max-output-per-line` counts
    /// the wider text escapes too (`UserRecord.nameBound(of:)`).
    static let nameJSONBytes = 2 * maxDisplayNameBytes

    /// The most bytes of a count (`{r}`) in a phrase: the digits of `Int.max`, and one.
    package static let maxCountBytes = 20

    /// The most clauses with a table's verb one phrase has: one per activity that
    /// has one. (Status clauses, one per status typer, come on top: their verbs are
    /// the typers' words, bounded by what the protocol takes of them, not by the
    /// table: ``appendStatusClause(shown:names:words:into:)``.)
    static let maxClauses = Activity.phrased.count

    /// `a + b + …`, saturating at `Int.max` instead of trapping.
    static func sum(_ terms: Int...) -> Int {
        terms.reduce(0) { total, term in
            let (result, overflow) = total.addingReportingOverflow(term)
            return overflow ? .max : result
        }
    }

    /// `a × b`, saturating at `Int.max` instead of trapping (both 0 or more).
    static func product(_ a: Int, _ b: Int) -> Int {
        let (result, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? .max : result
    }

    /// The most bytes `text` takes inside a JSON string or as text: 6 for a control
    /// character or DEL, 2 for `"` and `\\`, 6 for the lead byte of what may be
    /// U+0080–U+009F, U+061C or U+2000–U+2FFF (escaped as `\\u…` in JSON, `\\u{…}`
    /// in text: at most 8 bytes for 3), 1 for other bytes.
    package static func jsonBound(_ text: [UInt8]) -> Int {
        text.reduce(0) { total, byte in
            switch byte {
            case 0..<0x20, 0x7F, 0xC2, 0xD8, 0xE2: return total + 6
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): return total + 2
            default: return total + 1
            }
        }
    }

    /// Equal when made from the same parts.
    public static func == (lhs: PhraseTable, rhs: PhraseTable) -> Bool {
        lhs.locale == rhs.locale && lhs.plural == rhs.plural && lhs.names == rhs.names && lhs.verbs == rhs.verbs
            && lhs.clause == rhs.clause && lhs.separator == rhs.separator && lhs.end == rhs.end
    }

    /// True for a language tag as the protocol takes it: 1–35 bytes of ASCII
    /// letters, digits and `-`.
    public static func isLocaleTag(_ tag: String) -> Bool {
        isLocaleTag(tag.utf8)
    }

    /// ``isLocaleTag(_:)`` for a tag's UTF-8 bytes.
    package static func isLocaleTag<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        (1...35).contains(bytes.count)
            && bytes.allSatisfy { byte in
                (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
                    || byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") || byte == UInt8(ascii: "-")
            }
    }

    /// The forms of `text`, one per category (in ``PluralCategory`` order), each
    /// compiled by `compile`.
    private static func forms<Form>(
        of text: Text, key: String,
        _ compile: (String, String) throws(Error) -> Form
    ) throws(Error) -> [Form] {
        switch text {
        case .plain(let source):
            let form = try compile(source, key)
            return PluralCategory.allCases.map { _ in form }
        case .plural(let byCategory):
            guard let other = byCategory[.other] else {
                throw Error(
                    key: key, message: "a plural object needs \"other\", which serves every category it leaves out")
            }
            let fallback = try compile(other, "\(key).other")
            var forms: [Form] = []
            for category in PluralCategory.allCases {
                if category != .other, let source = byCategory[category] {
                    forms.append(try compile(source, "\(key).\(category.rawValue)"))
                } else {
                    forms.append(fallback)
                }
            }
            return forms
        }
    }

    // Rendering.

    /// The index of the subject key for `shown` names and `rest` counted.
    @inline(__always)
    private static func subjectIndex(shown: Int, rest: Int) -> Int {
        let suffix = rest == 0 ? 0 : rest == 1 ? 1 : 2
        switch shown {
        case 0: return rest == 1 ? 0 : 1
        case 1: return 2 + suffix
        case 2: return 5 + suffix
        default: return 8
        }
    }

    /// The names a clause shows (at most three), by position.
    package struct Names {
        var first = "", second = "", third = ""

        package init() {}

        /// The first three of `names`.
        package init(_ names: some Sequence<String>) {
            for (position, name) in names.prefix(3).enumerated() { self[position] = name }
        }

        package subscript(position: Int) -> String {
            get { position == 0 ? first : position == 1 ? second : third }
            set {
                switch position {
                case 0: first = newValue
                case 1: second = newValue
                default: third = newValue
                }
            }
        }
    }

    /// Appends one clause: `count` people doing `activity`, `shown` of them named
    /// (`names[i]` for i < shown), the `count − shown` others counted. With
    /// `several`, nobody is named (`shown` and `names` are not read): the subject is
    /// the table's `several`, or its `0+n` without one, with `{r}` = `count`
    /// (Protocol.md#several-people).
    ///
    /// It appends at most what ``phraseBound`` counts for one clause: its pieces
    /// are the ones the bound counts, a name at most ``maxDisplayNameBytes`` (a
    /// longer one, which only the engine's own API can give, is cut here at a
    /// character), a count at most ``maxCountBytes``. A phrase has at most one
    /// such clause per activity with a verb, so they take no more than
    /// ``phraseBound``, which the table was refused over ``maxPhraseBytes``, whatever
    /// the names; status clauses (``appendStatusClause(shown:names:words:into:)``)
    /// come on top, one per status typer, each with words the protocol caps. With
    /// `several`, the subject is the table's `several` (its `0+n` without one), r = n.
    package func appendClause(
        count: Int, shown: Int, activity: Activity, names: Names, several: Bool = false,
        into bytes: inout [UInt8]
    ) {
        // A status clause is phrased with its typer's words (appendStatusClause):
        // a table has no verb for it.
        guard activity.hasVerb else { return }
        let countCategory = PhraseTable.index(of: plural.category(of: count))
        verbForms[Int(activity.rawValue)][countCategory].withUnsafeBytes { verb in
            appendClause(count: count, shown: shown, verb: verb, names: names, several: several, into: &bytes)
        }
    }

    /// Appends one clause of `count` people, `shown` of them named, with `verb`
    /// (with `several`: the `several` subject, nobody named, r = count).
    private func appendClause(
        count: Int, shown: Int, verb: UnsafeRawBufferPointer, names: Names, several: Bool = false,
        into bytes: inout [UInt8]
    ) {
        let rest = several ? count : count - shown
        let subject =
            several
            ? severalForms ?? subjectForms[PhraseTable.subjectIndex(shown: 0, rest: rest)]
            : subjectForms[PhraseTable.subjectIndex(shown: shown, rest: rest)]
        let restCategory = PhraseTable.index(of: plural.category(of: rest))
        for piece in clauseTemplate.pieces {
            switch piece {
            case .literal(let text): bytes.append(contentsOf: text)
            case .slot(Template.namesSlot):
                for part in subject[restCategory].pieces {
                    switch part {
                    case .literal(let text): bytes.append(contentsOf: text)
                    case .slot(Template.countSlot): PhraseTable.appendDecimal(rest, into: &bytes)
                    case .slot(let slot):
                        var text = names[slot]
                        text.withUTF8 { name in
                            // At most a display name's longest: what the table's
                            // bound (``phraseBound``) counts.
                            guard name.count > PhraseTable.maxDisplayNameBytes else {
                                return bytes.append(contentsOf: name)
                            }
                            var end = PhraseTable.maxDisplayNameBytes
                            while end > 0 && name[end] & 0xC0 == 0x80 { end -= 1 }
                            bytes.append(contentsOf: name[..<end])
                        }
                    }
                }
            case .slot:
                bytes.append(contentsOf: verb)
            }
        }
    }

    /// Appends the clause of one typer whose activity is ``Activity/status``
    /// (Protocol.md#status-in-ones-own-words): the subject of a clause of one
    /// (`names[0]` when `shown` is 1, else the `0+1` form), and `words`, as given, for
    /// the verb: substitution is one pass, so `{0}` or `{verb}` in them stays as it is.
    package func appendStatusClause(shown: Int, names: Names, words: String, into bytes: inout [UInt8]) {
        var words = words
        words.withUTF8 { verb in
            appendClause(count: 1, shown: shown, verb: UnsafeRawBufferPointer(verb), names: names, into: &bytes)
        }
    }

    /// Appends the text between two clauses.
    @inline(__always)
    package func appendSeparator(into bytes: inout [UInt8]) { bytes.append(contentsOf: separatorBytes) }

    /// Appends the text after the last clause.
    @inline(__always)
    package func appendEnd(into bytes: inout [UInt8]) { bytes.append(contentsOf: endBytes) }

    @inline(__always)
    private static func index(of category: PluralCategory) -> Int {
        switch category {
        case .zero: return 0
        case .one: return 1
        case .two: return 2
        case .few: return 3
        case .many: return 4
        case .other: return 5
        }
    }

    @inline(__always)
    private static func appendDecimal(_ value: Int, into bytes: inout [UInt8]) {
        if value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var digits: [UInt8] = []
        var rest = value
        while rest > 0 {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        }
        bytes.append(contentsOf: digits.reversed())
    }
}

/// A compiled template: literal bytes and placeholders.
private struct Template: Sendable {
    enum Piece: Sendable {
        case literal([UInt8])
        /// 0–2: a shown name; ``Template/countSlot``: `{r}`; ``Template/namesSlot``
        /// and ``Template/verbSlot`` in a clause.
        case slot(Int)
    }

    static let countSlot = 3, namesSlot = 4, verbSlot = 5
    static let slots = ["{0}": 0, "{1}": 1, "{2}": 2, "{r}": countSlot, "{names}": namesSlot, "{verb}": verbSlot]

    var pieces: [Piece]

    /// Parses `source`, allowing the placeholders in `allowed`. A control character
    /// (U+0000–U+001F, U+007F–U+009F) or a line or paragraph separator (U+2028,
    /// U+2029) is refused: phrases, like display names, hold none.
    init(_ source: String, allowed: [String], key: String) throws(PhraseTable.Error) {
        if let bad = source.unicodeScalars.first(where: {
            DisplayName.isControl($0) || $0.value == 0x2028 || $0.value == 0x2029
        }) {
            throw PhraseTable.Error(
                key: key,
                message:
                    "holds U+\(String(bad.value, radix: 16, uppercase: true)), a control character or line separator, which phrases never hold"
            )
        }
        let bytes = Array(source.utf8)
        var pieces: [Piece] = []
        var literal: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "}") {
                throw PhraseTable.Error(
                    key: key,
                    message: "a \"}\" at byte \(index + 1) closes no placeholder; \(Template.describe(allowed))")
            }
            guard byte == UInt8(ascii: "{") else {
                literal.append(byte)
                index += 1
                continue
            }
            guard let close = bytes[index...].firstIndex(of: UInt8(ascii: "}")) else {
                throw PhraseTable.Error(
                    key: key, message: "a \"{\" at byte \(index + 1) is never closed; \(Template.describe(allowed))")
            }
            let name = String(decoding: bytes[index...close], as: UTF8.self)
            guard allowed.contains(name), let slot = Template.slots[name] else {
                throw PhraseTable.Error(
                    key: key, message: "\(Quote.string(name)) is not a placeholder here; \(Template.describe(allowed))")
            }
            if !literal.isEmpty { pieces.append(.literal(literal)) }
            literal = []
            pieces.append(.slot(slot))
            index = close + 1
        }
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        self.pieces = pieces
    }

    static func describe(_ allowed: [String]) -> String {
        allowed.isEmpty
            ? "this text takes no placeholders"
            : "the placeholders here are \(allowed.joined(separator: ", "))"
    }

    /// How many placeholders `matching` the slot numbers the template holds.
    func uses(_ matching: (Int) -> Bool) -> Int {
        pieces.reduce(0) { count, piece in
            if case .slot(let slot) = piece, matching(slot) { return count + 1 }
            return count
        }
    }

    /// The bytes of a template without placeholders.
    var literal: [UInt8] {
        pieces.reduce(into: []) { bytes, piece in
            if case .literal(let text) = piece { bytes.append(contentsOf: text) }
        }
    }

}

extension PhraseTable {
    /// English, built in (Protocol.md#languages): with everyone typing, exactly the
    /// phrases of Protocol.md#phrases.
    public static let english: PhraseTable = {
        func verb(_ one: String, _ other: String) -> Text { .plural([.one: one, .other: other]) }
        do {
            return try PhraseTable(
                locale: "en",
                plural: PluralRules([.one: "i = 1 and v = 0"]),
                names: [
                    "0+1": .plain("Someone"), "0+n": .plain("{r} people"), "1": .plain("{0}"),
                    "1+1": .plain("{0} and someone else"), "1+n": .plain("{0} and {r} others"),
                    "2": .plain("{0} and {1}"), "2+1": .plain("{0}, {1}, and someone else"),
                    "2+n": .plain("{0}, {1}, and {r} others"), "3": .plain("{0}, {1}, and {2}"),
                    "several": .plain("Several people")
                ],
                verbs: [
                    .typing: verb("is typing", "are typing"),
                    .recordingAudio: verb("is recording audio", "are recording audio"),
                    .recordingVideo: verb("is recording video", "are recording video"),
                    .sendingPhoto: verb("is sending a photo", "are sending photos"),
                    .sendingVideo: verb("is sending a video", "are sending videos"),
                    .sendingFile: verb("is sending a file", "are sending files"),
                    .sharingLocation: verb("is sharing a location", "are sharing locations")
                ],
                clause: "{names} {verb}", separator: "; ", end: "...")
        } catch {
            preconditionFailure("the built-in English table is invalid: \(error)")
        }
    }()
}
