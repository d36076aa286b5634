import Testing
import TypingCore
import TypingProtocol

/// A record's preamble (the header and the table lines) as the writer writes it and
/// the reader reads it, in chunks of any size: what follows it is handed on intact.
@Suite("Record preamble")
struct RecordPreambleTests {
    /// A table as a person writes it: over several lines, one of them ending in CRLF,
    /// with characters typingd escapes when it writes JSON (in CLDR sample text).
    static let table = """
        {"locale": "de",\r
         "plural": {"one": "i = 1 and v = 0 @integer 1\u{2028}\u{7f}"},
         "names": {"0+1": "Jemand", "0+n": "{r} Personen", "1": "{0}", "1+1": "{0} und noch jemand",
                   "1+n": "{0} und {r} weitere", "2": "{0} und {1}", "2+1": "{0}, {1} und noch jemand",
                   "2+n": "{0}, {1} und {r} weitere", "3": "{0}, {1} und {2}"},
         "verbs": {"typing": "tippt", "recording_audio": "spricht", "recording_video": "filmt",
                   "sending_photo": "knipst", "sending_video": "sendet", "sending_file": "schickt",
                   "sharing_location": "zeigt"},
         "clause": "{names} {verb}", "separator": "; ", "end": "…"}

        """

    /// The record a session with `header` writes for `input`.
    static func record(header: RecordHeader, input: String) -> [UInt8] {
        var session = Session(
            configuration: SessionConfiguration(), format: JSONFormat(), sink: [UInt8](),
            record: (sink: [UInt8](), header: header))
        _ = Array(input.utf8).withUnsafeBytes { session.feed($0) }
        session.finish()
        session.flush()
        return session.lines.recording?.sink ?? []
    }

    /// Reads `record` in chunks of `size`: the preamble, and the bytes after it.
    static func read(_ record: [UInt8], size: Int) throws -> (RecordPreamble, [UInt8]) {
        var preamble = RecordPreamble()
        var start = 0
        while true {
            let end = min(record.count, start + size)
            let chunk = record[start..<end]
            let fed = try chunk.withUnsafeBytes { bytes throws(RecordPlayer.BadRecord) in
                try preamble.feed(bytes)
            }
            if let offset = fed {
                return (preamble, preamble.carried + chunk.dropFirst(offset) + record[end...])
            }
            start = end
        }
    }

    @Test(
        "a table line per table, line breaks made spaces; read back whole in chunks of any size",
        arguments: [1, 2, 6, 7, 8, 64, 1 << 20])
    func roundTrip(size: Int) throws {
        let texts = [Self.table, Self.table.replacingOccurrences(of: "\"de\"", with: "\"fr\"")].map { Array($0.utf8) }
        let input = "{\"cmd\":\"stats\"}\n#table\n"
        let record = Self.record(header: RecordHeader(options: ["--timeout-ms", "150"], tables: texts), input: input)
        let lines = record.split(separator: 0x0A, omittingEmptySubsequences: false)
        #expect(lines[0].elementsEqual("#typingd-record v2 --timeout-ms 150".utf8))
        for (line, text) in zip(lines[1...2], texts) {
            let expected = "#table ".utf8 + text.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }
            #expect(line.elementsEqual(expected), "\(String(decoding: line, as: UTF8.self))")
        }
        let (preamble, rest) = try Self.read(record, size: size)
        #expect(preamble.version == "v2" && preamble.options == ["--timeout-ms", "150"] && preamble.lines == 3)
        let expected = try texts.map { text in
            try text.withUnsafeBytes { bytes throws(PhraseTable.Error) in try PhraseTableFile.decode(bytes) }
        }
        #expect(preamble.tables == expected)
        #expect(rest == Array(lines[3...].joined(separator: [0x0A])), "\(String(decoding: rest, as: UTF8.self))")
    }

    @Test("a version 1 record has no table lines: what follows its header is handed on, a #table line too")
    func versionOne() throws {
        let record = Array("#typingd-record v1 --phrase-table {}\n#table {}\n5\t{}\n".utf8)
        for size in [1, 7, 100] {
            let (preamble, rest) = try Self.read(record, size: size)
            #expect(preamble.version == "v1" && preamble.options == ["--phrase-table", "{}"] && preamble.lines == 1)
            #expect(rest == Array("#table {}\n5\t{}\n".utf8))
        }
    }

    /// The output of `record` played in chunks of `size`, as `typingd replay` plays it,
    /// with how it ended and how its lines end.
    static func play(_ record: [UInt8], size: Int) throws -> (
        [UInt8], RecordPlayer.Ending, RecordFormat.LineEnd, [PhraseTable]
    ) {
        let (preamble, rest) = try read(record, size: size)
        let configuration = SessionConfiguration(clock: .real, drain: false)
        var session = Session(configuration: configuration, format: JSONFormat(), sink: [UInt8]())
        var player = RecordPlayer(maxLineBytes: configuration.maxLineBytes, after: preamble)
        var start = 0
        while start < rest.count {
            let chunk = rest[start..<min(rest.count, start + size)]
            let played: Result<Void, RecordPlayer.Failure<Never>> = chunk.withUnsafeBytes { bytes in
                do throws(RecordPlayer.Failure<Never>) {
                    return .success(try player.feed(bytes, into: &session))
                } catch {
                    return .failure(error)
                }
            }
            try played.get()
            start += chunk.count
        }
        try player.finish()
        session.flush()
        return (session.sink, player.ending, preamble.lineEnd, preamble.tables)
    }

    @Test(
        "a record whose lines all end in CR LF plays as its LF form in chunks of any size, a CR and its LF in two chunks too",
        arguments: [1, 2, 3, 5, 64, 1 << 20])
    func crlfRecord(size: Int) throws {
        let table = String(decoding: Self.table.utf8.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }, as: UTF8.self)
        let lines = [
            "#typingd-record v2 --timeout-ms 150", "#table " + table,
            "5\t" + #"{"cmd":"join","conv":"c","user":"a","name":"Ann"}"#,
            "5\t" + #"{"cmd":"join","conv":"c","user":"b","name":"Ben",\#r"locale":"de"}"#,
            "6\t", "6\t\r", // blank; a CR (framed from CR CR LF)
            "7\t" + #"{"cmd":"type","conv":"c","user":"a"}"# + "\r",
            "8\tx\ry", "9!", "#end 400"
        ]
        let lf = Array((lines.joined(separator: "\n") + "\n").utf8)
        let crlf = Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
        let (expected, expectedEnding, expectedEnd, expectedTables) = try Self.play(lf, size: size)
        #expect(expectedEnd == .lf && expectedEnding == .ended(at: 400) && expectedTables.count == 1)
        let output = String(decoding: expected, as: UTF8.self)
        // Input line 3 is blank, 4 a CR (bad JSON), 5 ends in a CR (JSON white space), 6 holds one.
        #expect(
            output.contains(#""at":7,"conv":"c","viewer":"b","typing":["a"]"#)
                && output.contains(#""line":4,"code":"bad_json""#)
                && output.contains(#""line":6,"code":"bad_json""#)
                && output.contains(#""line":7,"code":"line_too_long""#)
                && !output.contains(#""line":3"#) && !output.contains(#""line":5"#), "\(output)")
        let (played, ending, lineEnd, tables) = try Self.play(crlf, size: size)
        #expect(lineEnd == .crlf && ending == expectedEnding && tables == expectedTables)
        #expect(played == expected, "\(String(decoding: played, as: UTF8.self))\nLF:\n\(output)")
    }
}
