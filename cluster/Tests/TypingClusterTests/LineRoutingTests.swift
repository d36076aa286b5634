import Testing
import TypingPartitioning
import TypingProtocol
@testable import TypingCluster

/// The router's rules for one line: where it goes, what is stamped, what refused.
@Suite struct LineRoutingTests {
    func route(_ text: String, stamp: Bool = true, maxLine: Int = 1000) -> (LineRouting.Outcome, [Int: String]) {
        var stored: [Int: String] = [:]
        let rules = LineRouting(partitions: 4, maxLine: maxLine, stamp: stamp)
        let outcome = Array(text.utf8).withUnsafeBytes { line in
            rules.route(line, time: 1234) { p, bytes in stored[p] = String(decoding: bytes, as: UTF8.self) }
        }
        return (outcome, stored)
    }

    @Test func aConversationCommandGoesToItsPartitionStamped() {
        let (outcome, stored) = route(#"{"cmd":"join","conv":"general","user":"ana"}  "#)
        #expect(outcome == .one(3))
        #expect(stored == [3: #"{"cmd":"join","conv":"general","user":"ana","at":1234}"#])
    }

    @Test func aCommandWithItsOwnTimeOrWithoutStampingIsStoredAsIs() {
        let line = #"{"cmd":"type","conv":"dm:alice:bob","user":"bob","at":5}"#
        #expect(route(line).1 == [1: line])
        let plain = #"{"cmd":"type","conv":"dm:alice:bob","user":"bob"}"#
        #expect(route(plain, stamp: false).1 == [1: plain])
    }

    @Test func commandsOfEveryPartitionGoToEach() {
        let (outcome, stored) = route(#"{"cmd":"offline","user":"ana"}"#)
        #expect(outcome == .every)
        #expect(stored.count == 4)
        #expect(stored[2] == #"{"cmd":"offline","user":"ana","at":1234}"#)
    }

    @Test func aLineThatIsNoCommandGoesToPartitionZeroUnstamped() {
        for line in [
            "not json", #"{"cmd":"fly"}"#, #"{"cmd":"tick"}"#, #"{"conv":"general","cmd":"join","user":"a","user":"b"}"#
        ] {
            let (outcome, stored) = route(line)
            #expect(outcome == .one(0), "\(line)")
            #expect(stored == [0: line])
        }
    }

    @Test func aWrongCommandOfOneConversationGoesToThatConversationStamped() {
        // No user: general's engine answers with the error, as one typingd would.
        let (outcome, stored) = route(#"{"cmd":"join","conv":"general"}"#)
        #expect(outcome == .one(3))
        #expect(stored == [3: #"{"cmd":"join","conv":"general","at":1234}"#])
    }

    @Test func blankLinesAreSkippedAndReservedIdsAndLongLinesRefused() {
        #expect(route(" \t ").0 == .blank)
        #expect(route(" \t ").1.isEmpty)
        guard case .refused(let why) = route(#"{"id":"typingd:seq:9","cmd":"stats"}"#).0 else {
            Issue.record("a reserved id was not refused")
            return
        }
        #expect(why.contains("reserved"))
        // On a line that is no command too: its error reply would carry the id.
        guard case .refused = route(#"{"id":"typingd:seq:9","cmd":"fly"}"#).0 else {
            Issue.record("a reserved id on a line that is no command was not refused")
            return
        }
        guard case .refused = route(String(repeating: " ", count: 20) + #"{"cmd":"stats"}"#, maxLine: 20).0 else {
            Issue.record("a long line was not refused")
            return
        }
    }

    @Test func theRuleIsPartitionsOwnForEveryVector() {
        for vector in Partition.testVectors where !vector.conv.isEmpty { // "" is no conversation id
            let conv = vector.conv.unicodeScalars.map {
                $0.value < 0x80 ? String($0) : String(format: "\\u%04x", $0.value)
            }.joined()
            let (outcome, _) = route(#"{"cmd":"query","conv":"\#(conv)"}"#)
            #expect(outcome == .one(vector.partitionOfFour), "\(vector.conv)")
        }
    }
}
