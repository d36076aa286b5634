import CJansson
import CJanssonArena
import Foundation
import Testing
import TypingCore
import TypingProtocol

/// jansson's per-thread arena (`Sources/CJanssonArena`): what a decoded line
/// allocates comes from it and is all given back by the end of the line, whatever
/// the line, on every thread.
@Suite("The decoder's arena")
struct ArenaTests {
    init() { CommandDecoder.installArena() }

    /// Lines of every shape: commands, each kind of error, deep nesting, a line
    /// whose document does not fit the 64 KiB block.
    static let lines: [String] = {
        var lines = [
            #"{"cmd":"join","conv":"g","user":"a","name":"Al"}"#,
            #"{"cmd":"type","conv":"g","user":"a","at":5,"activity":"recording_audio","thread":"t"}"#,
            #"{"cmd":"user","user":"a","locale":"de","receive_typing":false,"id":"x"}"#,
            #"{"cmd":"join","conv":"g","conv":"h","user":"a"}"#,
            #"{"cmd":"join","conv":"g""#,
            #"[1,2,3]"#, #""text""#, #"{"cmd":7}"#, #"{"cmd":"nope","id":[{"a":{"b":[]}}]}"#,
            String(repeating: "[", count: 2_000) + String(repeating: "]", count: 2_000)
        ]
        let keys = (0..<3_000).map { "\"k\($0)\":\"\(String(repeating: "v", count: 20))\"" }
        lines.append("{\"cmd\":\"stats\"," + keys.joined(separator: ",") + "}")
        return lines
    }()

    @Test("a decoded line is allocated from the arena and leaves nothing in it, whatever it was")
    func nothingLeft() {
        let decoder = CommandDecoder(clock: .manual)
        for line in ArenaTests.lines {
            let served = cj_arena_served()
            _ = Array(line.utf8).withUnsafeBytes { bytes in
                Result { () throws(Event.Error) in try decoder.decode(bytes, number: 1) }
            }
            // Every line here makes jansson allocate (a value, a key, an error's text).
            #expect(cj_arena_served() > served, "not decoded in the arena: \(line.prefix(60))")
            #expect(cj_arena_live() == 0, "\(line.prefix(60))")
        }
    }

    @Test("inside a scope jansson allocates from the arena, outside from malloc")
    func scope() throws {
        let outside = try #require(json_object())
        #expect(cj_arena_owns(outside) == 0)
        cj_arena_begin()
        let inside = try #require(json_object())
        #expect(cj_arena_owns(inside) != 0)
        #expect(cj_arena_live() > 0)
        let big = try #require(json_stringn(String(repeating: "x", count: 70_000), 70_000))
        #expect(cj_arena_owns(big) != 0) // the value itself fits
        #expect(cj_arena_owns(json_string_value(big)) == 0) // its 70,000 bytes do not
        json_decref(big)
        json_decref(inside)
        cj_arena_end()
        #expect(cj_arena_live() == 0)
        json_decref(outside) // a malloc'd value freed after the scope, as jansson's free
    }

    @Test("four threads decode at once, each from its own arena, as one thread does")
    func threads() throws {
        let lines = (0..<4_000).map { i in
            i % 5 == 0
                ? #"{"cmd":"join","conv":"g\#(i)""# : #"{"cmd":"type","conv":"c\#(i % 97)","user":"u\#(i)","at":\#(i)}"#
        }
        let expected = ArenaTests.decodeAll(lines)
        let releasedBefore = cj_arena_released()
        let results = Results()
        var threads: [pthread_t] = []
        for _ in 0..<4 {
            threads.append(
                try ThreadSpawner.spawn {
                    results.append(ArenaTests.decodeAll(lines), live: cj_arena_live())
                })
        }
        for thread in threads { pthread_join(thread, nil) }
        #expect(results.all.count == 4)
        // Each thread's block goes with the thread: its key destructor has run once
        // pthread_join returns. Other tests' threads come and go meanwhile, so count
        // releases, which only go up: four threads that each had a block have ended.
        #expect(cj_arena_released() - releasedBefore >= 4, "the threads' arena blocks were not released")
        for (result, live) in results.all {
            #expect(result == expected)
            #expect(live == 0)
        }
    }

    /// Each line's command, or its error message.
    static func decodeAll(_ lines: [String]) -> [String] {
        let decoder = CommandDecoder(clock: .manual)
        return lines.map { line in
            let result = Array(line.utf8).withUnsafeBytes { bytes in
                Result { () throws(Event.Error) in try decoder.decode(bytes, number: 1) }
            }
            switch result {
            case .success(let request): return "\(request.command)"
            case .failure(let error): return error.message
            }
        }
    }

    /// What the threads found.
    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var results: [([String], Int)] = []
        func append(_ result: [String], live: Int) { lock.withLock { results.append((result, live)) } }
        var all: [([String], Int)] { lock.withLock { results } }
    }
}
