import Testing
import TypingCore
import TypingPartitioning
import TypingProtocol
import TypingTestSupport

/// Running several typingd processes, without a broker: a seeded workload split by
/// the routing rules of Protocol.md ("Running several typingd processes") into N
/// engines gives, for every conversation, the events one engine gives.
@Suite("Partitions")
struct PartitionTests {
    static func partition(of conv: Identifier, among count: Int) -> Int {
        Partition.of(conv, among: count)
    }

    @Test("FNV-1a test vectors, the same as the router's (cluster/README.md)")
    func vectors() {
        for (conv, hash, partitionOfFour) in Partition.testVectors {
            #expect(Partition.hash(conv.utf8) == hash, "\(conv.debugDescription)")
            #expect(
                Partition.of(Identifier(conv), among: 4) == partitionOfFour
                    && Partition.of(conv, among: 4) == partitionOfFour)
        }
        #expect(Partition.of("general", among: 1) == 0 && Partition.of("general", among: 0) == 0)
    }

    /// Where a command goes: its conversation's partition, or every partition.
    static func routes(_ command: Command, among count: Int) -> [Int] {
        switch Partition.route(of: command, among: count) {
        case .one(let partition): return [partition]
        case .every: return Array(0..<count)
        }
    }

    /// A seeded W1-like workload that follows the rules for several processes:
    /// every join carries the user's current name and setting, and renames and
    /// settings go through `user`. Every command has an `at`.
    static func workload(seed: UInt64, commands: Int) -> [Request] {
        var random = SplitMix64(seed: seed)
        let conversations = 40, users = 60
        var names = (0..<users).map { "User \($0)" as String? }
        var sendsTyping = [Bool](repeating: true, count: users)
        var members = [Set<Int>](repeating: [], count: conversations)
        var requests: [Request] = []
        var time = 0
        func add(_ command: Command) {
            requests.append(Request(command, at: time, line: requests.count + 1))
        }
        func join(_ c: Int, _ u: Int) {
            add(.join(conv: Identifier("c\(c)"), user: Identifier("u\(u)"), name: names[u], sendTyping: sendsTyping[u]))
            members[c].insert(u)
        }
        for c in 0..<conversations {
            for _ in 0..<(2 + random.below(6)) { join(c, random.below(users)) }
        }
        while requests.count < commands {
            time += random.below(400)
            let c = random.below(conversations)
            let member = members[c].isEmpty ? nil : members[c].sorted()[random.below(members[c].count)]
            let conv = Identifier("c\(c)")
            switch random.below(100) {
            case 0..<45:
                if let u = member {
                    add(
                        .type(
                            conv: conv, user: Identifier("u\(u)"),
                            timeout: random.below(10) == 0 ? 500 + random.below(5000) : nil))
                }
            case 45..<55: if let u = member { add(.send(conv: conv, user: Identifier("u\(u)"))) }
            case 55..<58: if let u = member { add(.type(conv: conv, user: Identifier("u\(u)"), empty: true)) }
            case 58..<63: if let u = member { add(.open(conv: conv, user: Identifier("u\(u)"))) }
            case 63..<66: if let u = member { add(.close(conv: conv, user: Identifier("u\(u)"))) }
            case 66..<70:
                if let u = member {
                    add(
                        random.below(2) == 0
                            ? .leave(conv: conv, user: Identifier("u\(u)"))
                            : .remove(conv: conv, user: Identifier("u\(u)"), by: nil))
                    members[c].remove(u)
                    // A user with no membership left is forgotten with their settings.
                    if !members.contains(where: { $0.contains(u) }) { names[u] = "User \(u)"; sendsTyping[u] = true }
                }
            case 70..<78: join(c, random.below(users))
            case 78..<81: add(.offline(user: Identifier("u\(random.below(users))")))
            case 81..<85:
                let u = random.below(users)
                guard members.contains(where: { $0.contains(u) }) else { continue }
                names[u] = random.below(4) == 0 ? " " : "Renamed \(random.below(1000))"
                add(.user(user: Identifier("u\(u)"), name: names[u]))
            case 85..<87:
                let u = random.below(users)
                guard members.contains(where: { $0.contains(u) }) else { continue }
                sendsTyping[u].toggle()
                add(.user(user: Identifier("u\(u)"), sendTyping: sendsTyping[u]))
            case 87..<92: add(.tick)
            case 92..<95: add(.query(conv: conv))
            default: add(.stats)
            }
        }
        time += 100_000
        add(.tick)
        return requests
    }

    /// The events of each conversation (indicator and typing), in order.
    static func byConversation(_ events: [Event]) -> [Identifier: [Event]] {
        var split: [Identifier: [Event]] = [:]
        for event in events {
            switch event {
            case .indicator(let indicator): split[indicator.conv, default: []].append(event)
            case .typing(let typing): split[typing.conv, default: []].append(event)
            default: break
            }
        }
        return split
    }

    @Test(
        "N engines fed by the routing rules give every conversation the events of one engine",
        arguments: [(1, 1), (2, 2), (3, 3), (4, 4), (4, 5)])
    func equivalence(partitions: Int, seed: UInt64) {
        let configuration = EngineConfiguration(
            typingEvents: true, audience: seed % 2 == 0 ? .open : .members,
            order: [.start, .recent, .name][Int(seed % 3)], maxListed: 3)
        let requests = Self.workload(seed: seed, commands: 4000)
        var single = Engine(configuration: configuration)
        var singleEvents: [Event] = []
        for request in requests { single.apply(request, to: &singleEvents) }

        var engines = (0..<partitions).map { _ in Engine(configuration: configuration) }
        var shardEvents = [[Event]](repeating: [], count: partitions)
        var statsReplies: [Int: [Event.Stats]] = [:]
        for request in requests {
            for p in Self.routes(request.command, among: partitions) {
                var events: [Event] = []
                engines[p].apply(request, to: &events)
                for case .stats(let stats) in events { statsReplies[request.line, default: []].append(stats) }
                shardEvents[p] += events
            }
        }
        for engine in engines { engine.checkInvariants() }

        let expected = Self.byConversation(singleEvents)
        let actual = Self.byConversation(shardEvents.flatMap { $0 })
        #expect(Set(actual.keys) == Set(expected.keys))
        let differing = expected.keys.filter { actual[$0] != expected[$0] }
        #expect(
            differing.isEmpty, "\(differing.count) conversations differ, e.g. \(differing.first.map(\.string) ?? "")")

        // stats: conversations, members and typing sum to the single engine's.
        for case .stats(let one) in singleEvents {
            let parts = statsReplies[one.lines] ?? []
            #expect(parts.count == partitions)
            #expect(parts.map(\.conversations).reduce(0, +) == one.conversations)
            #expect(parts.map(\.members).reduce(0, +) == one.members)
            #expect(parts.map(\.typing).reduce(0, +) == one.typing)
        }
        #expect(engines.map(\.membershipCount).reduce(0, +) == single.membershipCount)
        #expect(engines.map(\.typingCount).reduce(0, +) == single.typingCount)
    }
}
