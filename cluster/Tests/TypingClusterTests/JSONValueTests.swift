import Testing
@testable import TypingCluster

@Suite struct JSONValueTests {
    @Test func roundTrips() throws {
        let text = #"{"a":[1,-2.5e3,true,false,null],"b":"x\"\\\n\u0001é🎉","c":{}}"#
        let value = try #require(JSONValue.parse(Array(text.utf8)))
        #expect(value["b"]?.string == "x\"\\\n\u{1}é🎉")
        #expect(JSONValue.parse(value.bytes) == value)
        #expect(
            String(decoding: value.bytes, as: UTF8.self)
                == #"{"a":[1,-2.5e3,true,false,null],"b":"x\"\\\n\u0001é🎉","c":{}}"#)
        #expect(JSONValue.parse(Array(#""\ud83c\udf89""#.utf8))?.string == "🎉")
    }

    @Test func refusesWhatIsNotJSON() {
        for text in ["", "{", "[1,]", "01", "1.", "\"a", "\"\\ud83c\"", "{\"a\" 1}", "nul", "[1] x", "\"\u{1}\""] {
            #expect(JSONValue.parse(Array(text.utf8)) == nil, "\(text)")
        }
        #expect(JSONValue.parse(Array(repeating: UInt8(ascii: "["), count: 100_000)) == nil) // no deep recursion
        #expect(JSONValue.parse([0x22, 0xFF, 0x22]) == nil) // not UTF-8
    }
}

/// The stats objects (`route --stats-file`, JSON) write strings with the same writer.
@Suite struct StatsTextTests {
    @Test func statsWriteValidJSONInTheirOrder() {
        let name = "r\"1\\\n\t/\u{1}é"
        let text = StatsText.json([
            ("name", name), ("lines", 7), ("parts", [1, 2]), ("rate", 0.5), ("up", true), ("gone", nil as Int?)
        ])
        #expect(text == (#"{"name":"r\"1\\\n\t/\u0001é","lines":7,"parts":[1,2],"rate":0.5,"up":true,"gone":null}"#))
        let parsed = JSONValue.parse(Array(text.utf8))
        #expect(parsed?["name"]?.string == name)
    }
}
