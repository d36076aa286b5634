/// The phrase tables an engine knows, and how a user's locale chooses one
/// (Protocol.md#languages).
///
/// English (``PhraseTable/english``) is built in; tables given later replace one
/// for the same locale (tags compare ignoring ASCII case), English included. For a
/// user's locale L the book tries L, then L without its last `-subtag`, repeatedly
/// (`pt-BR-x` → `pt-BR` → `pt`); then the default locale the same way; then `en`.
public struct PhraseBook: Sendable, Equatable {
    /// The tables, English (or what replaced it) first.
    public let tables: [PhraseTable]
    /// The locale of users who gave none.
    public let defaultLocale: String
    /// Lowercased tag → table.
    private let byTag: [String: Int]
    /// The table users with no locale get.
    package let defaultTable: Int
    /// The most bytes any table's clause, separator and end take in JSON output.
    package let bounds: (clause: Int, names: Int, counts: Int, separator: Int, end: Int)

    /// What is wrong with a default locale.
    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, for a person.
        public var message: String

        /// The message.
        public var description: String { message }
    }

    /// English only.
    public static let english = PhraseBook(checked: [PhraseTable.english], defaultLocale: "en")

    /// The built-in English table and `tables`, in that order (a table for a locale
    /// already in the book replaces it), with `defaultLocale` for users who give
    /// none. `defaultLocale` must be a language tag.
    public init(tables: [PhraseTable] = [], defaultLocale: String = "en") throws(Error) {
        guard PhraseTable.isLocaleTag(defaultLocale) else {
            throw Error(
                message: "\(Quote.string(defaultLocale)) is not a language tag (1–35 ASCII letters, digits and \"-\")")
        }
        var all = [PhraseTable.english]
        var indexOfTag = [PhraseBook.lowercased(PhraseTable.english.locale): 0]
        for table in tables {
            let tag = PhraseBook.lowercased(table.locale)
            if let index = indexOfTag[tag] {
                all[index] = table
            } else {
                indexOfTag[tag] = all.count
                all.append(table)
            }
        }
        self.init(checked: all, defaultLocale: defaultLocale)
    }

    private init(checked tables: [PhraseTable], defaultLocale: String) {
        self.tables = tables
        self.defaultLocale = defaultLocale
        var byTag: [String: Int] = [:]
        for (index, table) in tables.enumerated() { byTag[PhraseBook.lowercased(table.locale)] = index }
        self.byTag = byTag
        self.defaultTable =
            PhraseBook.lookup(PhraseBook.lowercased(defaultLocale), in: byTag)
            ?? byTag["en"] ?? 0
        self.bounds = (
            tables.map(\.clauseBound).max() ?? 0, tables.map(\.clauseNames).max() ?? 0,
            tables.map(\.clauseCounts).max() ?? 0, tables.map(\.separatorBound).max() ?? 0,
            tables.map(\.endBound).max() ?? 0
        )
    }

    /// The table a user with `locale` gets (nil: the default locale's).
    public func table(for locale: String?) -> Int {
        guard let locale else { return defaultTable }
        return PhraseBook.lookup(PhraseBook.lowercased(locale), in: byTag) ?? defaultTable
    }

    /// The table for `tag` (lowercased) or one of its truncations.
    private static func lookup(_ tag: String, in byTag: [String: Int]) -> Int? {
        var tag = Substring(tag)
        while !tag.isEmpty {
            if let index = byTag[String(tag)] { return index }
            guard let dash = tag.lastIndex(of: "-") else { return nil }
            tag = tag[..<dash]
        }
        return nil
    }

    /// `tag` with ASCII letters lowercased (tags compare ignoring ASCII case).
    package static func lowercased(_ tag: String) -> String {
        String(decoding: tag.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// True when two tags are equal ignoring ASCII case.
    package static func sameTag(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && lowercased(a) == lowercased(b)
    }

    /// Equal when they hold the same tables and default.
    public static func == (lhs: PhraseBook, rhs: PhraseBook) -> Bool {
        lhs.tables == rhs.tables && lhs.defaultLocale == rhs.defaultLocale
    }

    /// The table at `index`.
    @inline(__always)
    package subscript(index: Int) -> PhraseTable { tables[index] }
}
