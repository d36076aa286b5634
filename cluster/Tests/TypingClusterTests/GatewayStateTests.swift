import Testing
@testable import TypingCluster

/// The gateway's rules without a server: epochs, answers against later
/// messages, messages an answer covers.
@Suite struct GatewayStateTests {
    static func line(
        _ viewer: String, _ conv: String, _ typing: [String], thread: String? = nil, view: String? = nil,
        side: Bool = false, text: String = ""
    ) -> String {
        var line = "{\"event\":\"indicator\",\"at\":1,\"conv\":\"\(conv)\""
        if let thread { line += ",\"thread\":\"\(thread)\"" }
        line += ",\"viewer\":\"\(viewer)\""
        if side { line += ",\"pane\":\"side\"" }
        if let view { line += ",\"view\":\"\(view)\"" }
        line += ",\"typing\":[\(typing.map { "\"\($0)\"" }.joined(separator: ","))],\"text\":\"\(text)\"}"
        return line
    }

    /// An announce event for `viewer`'s screen.
    static func announce(_ viewer: String, _ conv: String, _ text: String, thread: String? = nil, side: Bool = false)
        -> String
    {
        var line = "{\"event\":\"announce\",\"at\":2,\"conv\":\"\(conv)\""
        if let thread { line += ",\"thread\":\"\(thread)\"" }
        line += ",\"viewer\":\"\(viewer)\""
        if side { line += ",\"pane\":\"side\"" }
        return line + ",\"text\":\"\(text)\"}"
    }

    static func headers(_ p: Int, _ epoch: Int, _ seq: Int) -> [String: String] {
        [Names.Header.partition: String(p), Names.Header.epoch: String(epoch), Names.Header.sequence: String(seq)]
    }

    static func answer(_ p: Int, _ epoch: Int, _ seq: Int, _ lines: [String], buckets: Int? = nil) -> ResyncAnswer? {
        var body = "{\"partition\":\(p),\"epoch\":\(epoch),\"seq\":\(seq),"
        if let buckets { body += "\"viewer_buckets\":\(buckets)," }
        body += "\"indicators\":[\(lines.joined(separator: ","))]}"
        return ResyncAnswer(body: Array(body.utf8))
    }

    static func typing(_ state: GatewayState, _ viewer: String, _ screen: Screen) -> [String]? {
        guard let line = state.current(viewer, screen), let event = JSONValue.parse(line) else { return nil }
        return event["typing"]?.array?.compactMap(\.string)
    }

    let g = Screen(conv: "g")

    @Test func aLowerEpochIsDroppedAndAHigherOneAsksForAResync() {
        var state = GatewayState(viewers: ["bob"], allViewers: false, partitions: 4)
        var outcome = state.take(body: Array(Self.line("bob", "g", ["ann"]).utf8), headers: Self.headers(3, 2, 10))
        #expect(outcome.updates.count == 1 && !outcome.wantsResync) // the first epoch seen: nothing to resync from
        outcome = state.take(body: Array(Self.line("bob", "g", ["old"]).utf8), headers: Self.headers(3, 1, 50))
        #expect(outcome.updates.isEmpty)
        #expect(state.counts.staleEpoch == 1)
        #expect(Self.typing(state, "bob", g) == ["ann"])
        outcome = state.take(body: Array(Self.line("bob", "g", ["new"]).utf8), headers: Self.headers(3, 3, 1))
        #expect(outcome.wantsResync && outcome.previousEpoch == 2 && outcome.partition == 3)
        #expect(state.counts.newEpochs == 1)
        #expect(Self.typing(state, "bob", g) == ["new"])
        #expect(state.epochs[3] == 3)
    }

    @Test func anAnswerDoesNotOverwriteAScreenALaterMessageSet() throws {
        var state = GatewayState(viewers: ["bob"], allViewers: false, partitions: 4)
        let h = Screen(conv: "h")
        _ = state.take(
            body: Array((Self.line("bob", "g", ["ann"]) + "\n" + Self.line("bob", "h", ["cy"])).utf8),
            headers: Self.headers(1, 1, 193))
        // The answer of seq 189 arrives after the message of seq 193: it lists g
        // with someone else, and not h; both keep what seq 193 set.
        let early = try #require(Self.answer(1, 1, 189, [Self.line("bob", "g", ["zed"])]))
        #expect(state.take(answer: early, for: "bob")?.isEmpty == true)
        #expect(Self.typing(state, "bob", g) == ["ann"])
        #expect(Self.typing(state, "bob", h) == ["cy"])
        // A later answer replaces the partition's screens: g as listed, h cleared.
        let late = try #require(Self.answer(1, 1, 200, [Self.line("bob", "g", ["zed"])]))
        let taken = state.take(answer: late, for: "bob")
        let updates = try #require(taken)
        #expect(Self.typing(state, "bob", g) == ["zed"])
        #expect(state.current("bob", h) == nil)
        #expect(updates.count == 2 && updates.filter { $0.line == nil }.map(\.screen) == [h])
        #expect(updates.allSatisfy { $0.source == .resync })
    }

    @Test func anAnswerLeavesOtherPartitionsScreensAlone() throws {
        var state = GatewayState(viewers: ["bob"], allViewers: false, partitions: 4)
        _ = state.take(body: Array(Self.line("bob", "g", ["ann"]).utf8), headers: Self.headers(2, 1, 5))
        let answer = try #require(Self.answer(1, 1, 100, []))
        _ = state.take(answer: answer, for: "bob")
        #expect(Self.typing(state, "bob", g) == ["ann"])
    }

    @Test func messagesAnAnswerCoversAreDropped() throws {
        var state = GatewayState(viewers: ["bob"], allViewers: false, partitions: 4)
        let answer = try #require(Self.answer(0, 4, 20, [Self.line("bob", "g", ["ann", "cy"])]))
        _ = state.take(answer: answer, for: "bob")
        // Queued before the answer was taken, and older than it: dropped.
        for seq in [15, 20] {
            let outcome = state.take(body: Array(Self.line("bob", "g", ["ann"]).utf8), headers: Self.headers(0, 4, seq))
            #expect(outcome.updates.isEmpty)
        }
        #expect(state.counts.covered == 2)
        #expect(Self.typing(state, "bob", g) == ["ann", "cy"])
        let outcome = state.take(body: Array(Self.line("bob", "g", []).utf8), headers: Self.headers(0, 4, 21))
        #expect(outcome.updates.count == 1)
        #expect(Self.typing(state, "bob", g) == [])
        // Another viewer of the same partition is not covered by bob's answer.
        var other = state
        _ = other.take(body: Array(Self.line("bob", "g", ["x"]).utf8), headers: Self.headers(0, 4, 22))
        #expect(other.counts.covered == 2)
    }

    @Test func aDeposedOwnersAnswerIsNotTaken() throws {
        var state = GatewayState(viewers: ["bob"], allViewers: false, partitions: 4)
        _ = state.take(body: Array(Self.line("bob", "g", ["ann"]).utf8), headers: Self.headers(1, 5, 10))
        let deposed = try #require(Self.answer(1, 4, 99, []))
        #expect(state.take(answer: deposed, for: "bob") == nil)
        #expect(Self.typing(state, "bob", g) == ["ann"])
        let newer = try #require(Self.answer(1, 6, 1, []))
        #expect(state.take(answer: newer, for: "bob") != nil)
        #expect(state.epochs[1] == 6)
        #expect(state.current("bob", g) == nil)
    }

    @Test func onlyItsViewersUnlessAllViewers() {
        var some = GatewayState(viewers: ["bob"], allViewers: false, partitions: 4)
        let body = Array(
            (Self.line("bob", "g", ["ann"]) + "\n\n" + Self.line("eve", "g", ["ann"]) + "\nnot json\n"
                + "{\"event\":\"typing\",\"conv\":\"g\"}").utf8)
        #expect(some.take(body: body, headers: Self.headers(0, 1, 1)).updates.map(\.viewer) == ["bob"])
        #expect(some.counts.badLines == 1)
        var all = GatewayState(viewers: ["bob"], allViewers: true, partitions: 4)
        #expect(all.take(body: body, headers: Self.headers(0, 1, 1)).updates.map(\.viewer) == ["bob", "eve"])
        #expect(all.viewers == ["bob", "eve"])
    }

    @Test func screensAreConvThreadAndView() {
        var state = GatewayState(viewers: ["pia"], allViewers: false, partitions: 4)
        let body = [
            Self.line("pia", "eng", ["omar"]), Self.line("pia", "eng", ["rita"], thread: "release"),
            Self.line("pia", "eng", ["sam"], view: "list")
        ].joined(separator: "\n")
        _ = state.take(body: Array(body.utf8), headers: Self.headers(0, 1, 1))
        #expect(Self.typing(state, "pia", Screen(conv: "eng")) == ["omar"])
        #expect(Self.typing(state, "pia", Screen(conv: "eng", thread: "release")) == ["rita"])
        #expect(Self.typing(state, "pia", Screen(conv: "eng", view: "list")) == ["sam"])
    }

    @Test func aMainScreenAndASidePaneAtTheSameThreadAreTwoScreens() throws {
        var state = GatewayState(viewers: ["rita"], allViewers: false, partitions: 4)
        let body = [
            Self.line("rita", "eng", ["omar"], thread: "release"),
            Self.line("rita", "eng", ["pia"], thread: "release", side: true)
        ].joined(separator: "\n")
        let outcome = state.take(body: Array(body.utf8), headers: Self.headers(0, 1, 1))
        #expect(outcome.updates.map(\.screen.pane) == [nil, "side"])
        let main = Screen(conv: "eng", thread: "release"), side = Screen(conv: "eng", thread: "release", pane: "side")
        #expect(Self.typing(state, "rita", main) == ["omar"])
        #expect(Self.typing(state, "rita", side) == ["pia"])
        // The side pane clears; the main screen still shows Omar; both are finals.
        _ = state.take(
            body: Array(Self.line("rita", "eng", [], thread: "release", side: true).utf8),
            headers: Self.headers(0, 1, 2))
        #expect(Self.typing(state, "rita", main) == ["omar"])
        let finals = state.finals
        #expect(finals.map(\.screen) == [main, side])
        let sideLine = try #require(JSONValue.parse(finals[1].jsonLine))
        #expect(sideLine["pane"]?.string == "side" && sideLine["indicator"] == .null)
        #expect(try #require(JSONValue.parse(finals[0].jsonLine))["pane"] == .null)
        // A resync answer lists both; one that lists only the main screen clears the side pane.
        let answer = try #require(Self.answer(0, 1, 5, [Self.line("rita", "eng", ["omar"], thread: "release")]))
        _ = state.take(answer: answer, for: "rita")
        #expect(Self.typing(state, "rita", main) == ["omar"])
        #expect(state.current("rita", side) == nil)
    }

    @Test func announcementsAreHandedOnAndChangeNoScreen() throws {
        var state = GatewayState(viewers: ["bob"], allViewers: false, partitions: 4)
        let body = [
            Self.line("bob", "g", ["ann"], text: "Ann is typing..."),
            Self.line("bob", "g", ["cy"], thread: "t", side: true, text: "Cy is typing..."),
            Self.announce("bob", "g", "Ann is typing..."),
            Self.announce("bob", "g", "Cy is typing...", thread: "t", side: true),
            Self.announce("eve", "g", "Ann is typing...")
        ].joined(separator: "\n")
        let outcome = state.take(body: Array(body.utf8), headers: Self.headers(2, 1, 7))
        #expect(outcome.updates.map(\.kind) == [.indicator, .indicator, .announce, .announce], "eve is not served")
        #expect(outcome.updates.map(\.screen.pane) == [nil, "side", nil, "side"])
        #expect(
            outcome.updates.last?.line.map { String(decoding: $0, as: UTF8.self) }
                == Self.announce("bob", "g", "Cy is typing...", thread: "t", side: true))
        #expect(state.counts.announcements == 2 && state.counts.indicators == 2)
        #expect(Self.typing(state, "bob", g) == ["ann"], "an announcement sets no screen")
        #expect(state.finals.count == 2)
        // A deposed owner's announcement is dropped with its message.
        #expect(
            state.take(body: Array(Self.announce("bob", "g", "Ann is typing...").utf8), headers: Self.headers(2, 0, 9))
                .updates.isEmpty)
    }

    @Test func anAnswerCoversAnAnnouncementOnlyWhenItsScreenSaysSomethingElseNow() throws {
        var state = GatewayState(viewers: ["bob"], allViewers: false, partitions: 4)
        let answer = try #require(
            Self.answer(0, 4, 20, [Self.line("bob", "g", ["ann", "cy"], text: "Ann and Cy are typing...")]))
        _ = state.take(answer: answer, for: "bob")
        // Queued before the answer: one for the sentence the screen shows now is
        // still said; one for a sentence the screen left is stale.
        var outcome = state.take(
            body: Array(Self.announce("bob", "g", "Ann and Cy are typing...").utf8), headers: Self.headers(0, 4, 19))
        #expect(outcome.updates.map(\.kind) == [.announce])
        outcome = state.take(
            body: Array(Self.announce("bob", "g", "Ann is typing...").utf8), headers: Self.headers(0, 4, 18))
        #expect(outcome.updates.isEmpty)
        #expect(state.counts.covered == 1 && state.counts.announcements == 1)
        // After the answer, announcements are handed on as they come.
        outcome = state.take(
            body: Array(Self.announce("bob", "g", "Ann is typing...").utf8), headers: Self.headers(0, 4, 21))
        #expect(outcome.updates.count == 1)
    }

    @Test func finalsAreWatchPysLines() throws {
        var state = GatewayState(viewers: ["bob"], allViewers: false, partitions: 4)
        _ = state.take(
            body: Array((Self.line("bob", "g", ["ann"]) + "\n" + Self.line("bob", "h", [], thread: "t")).utf8),
            headers: [:]) // no headers: the partition from the conversation
        let finals = state.finals
        #expect(finals.map(\.screen.conv) == ["g", "h"])
        let first = try #require(JSONValue.parse(finals[0].jsonLine))
        #expect(first["viewer"]?.string == "bob" && first["conv"]?.string == "g")
        #expect(first["thread"] == .null && first["view"] == .null && first["pane"] == .null)
        #expect(first["indicator"]?["typing"]?.array == [.string("ann")])
        let second = try #require(JSONValue.parse(finals[1].jsonLine))
        #expect(second["thread"]?.string == "t")
        #expect(second["indicator"] == .null) // shows nobody
    }

    @Test func answersThatAreNotOnesAreRefused() {
        #expect(ResyncAnswer(body: Array("{\"partition\":1,\"epoch\":2}".utf8)) == nil)
        #expect(ResyncAnswer(body: Array("{\"partition\":\"1\",\"epoch\":2,\"seq\":3,\"indicators\":[]}".utf8)) == nil)
        #expect(ResyncAnswer(body: []) == nil)
        #expect(Self.answer(1, 2, 3, [], buckets: 8)?.viewerBuckets == 8)
    }
}
