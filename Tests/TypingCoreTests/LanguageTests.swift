import Testing
import TypingCore

/// Languages: a locale tag chooses a phrase table by dropping subtags, then the
/// default locale, then English; a change of locale re-renders the user's
/// conversations.
@Suite("Languages")
struct LanguageTests {
    static let book = RandomWorkloadTests.book

    @Test("tags choose tables by dropping subtags, then the default locale, then English; English can be replaced")
    func localeChoice() throws {
        let pt = try PhraseTable(
            locale: "PT", names: PhraseTable.english.names, verbs: PhraseTable.english.verbs,
            clause: "{names} {verb}", separator: "; ", end: " (pt)")
        let en = try PhraseTable(
            locale: "en", names: PhraseTable.english.names, verbs: PhraseTable.english.verbs,
            clause: "{names} {verb}", separator: "; ", end: "…")
        let book = try PhraseBook(tables: [pt], defaultLocale: "pt-BR-x")
        #expect(book.table(for: "pt-BR-x-y") == 1 && book.table(for: "Pt") == 1)
        #expect(book.table(for: nil) == 1, "the default locale pt-BR-x chooses pt")
        #expect(book.table(for: "zz") == 1, "an unknown tag gets the default locale's table")
        #expect(try PhraseBook(tables: [pt], defaultLocale: "zz").table(for: "ja") == 0, "then English")
        let replaced = try PhraseBook(tables: [en])
        #expect(replaced.tables.count == 1 && replaced.tables[0].end == "…")
        #expect(throws: PhraseBook.Error.self) { try PhraseBook(defaultLocale: "de_DE") }
    }

    @Test("subtags are dropped from the end, one at a time: the longest tag that has a table wins")
    func longestTagWins() throws {
        func table(_ locale: String) throws -> PhraseTable {
            try PhraseTable(
                locale: locale, names: PhraseTable.english.names, verbs: PhraseTable.english.verbs,
                clause: "{names} {verb}", separator: "; ", end: " (\(locale))")
        }
        // English is table 0; then pt 1, pt-BR 2, zh-Hant 3.
        let book = try PhraseBook(tables: [table("pt"), table("pt-BR"), table("zh-Hant")], defaultLocale: "zh-Hant-TW")
        #expect(book.table(for: "pt-BR-x-y") == 2, "pt-BR-x-y → pt-BR-x → pt-BR, before pt")
        #expect(book.table(for: "pt-PT-x") == 1)
        #expect(book.table(for: nil) == 3, "the default locale zh-Hant-TW chooses zh-Hant")
    }

    @Test(
        "a change of locale re-renders the user's conversations in the order they joined them; a re-join counts from its own time"
    )
    func localeVisitsInJoinOrder() {
        var h = Harness(EngineConfiguration(phrases: Self.book))
        for conv in ["a", "b", "c"] {
            h.run(.join(conv: ID(conv), user: ID("viv"), name: "Viv"))
            h.run(.join(conv: ID(conv), user: ID("tom"), name: "Tom"))
        }
        h.run(.leave(conv: ID("a"), user: ID("viv")), at: 1)
        h.run(.join(conv: ID("a"), user: ID("viv")), at: 2)
        h.type("c", "tom", at: 10)
        h.type("a", "tom", at: 11)
        h.type("b", "tom", at: 12)
        // Without a locale, Viv reads the default locale's table (de-CH: de).
        #expect(
            h.run(.user(user: ID("viv"), locale: "xx-YY"), at: 20) == [
                "@20 b viv: [tom] TYPING: <Tom>", "@20 c viv: [tom] TYPING: <Tom>", "@20 a viv: [tom] TYPING: <Tom>"
            ])
        #expect(
            h.run(.user(user: ID("viv"), locale: "XX-yy"), at: 21).isEmpty, "the same tag, ignoring case: no change")
        #expect(
            h.run(.user(user: ID("viv"), locale: "fr"), at: 22) == [
                "@22 b viv: [tom] Tom tut typing …", "@22 c viv: [tom] Tom tut typing …",
                "@22 a viv: [tom] Tom tut typing …"
            ], "fr has no table: the default locale's")
    }
}
