import Testing
import TypingCore
import TypingTestSupport

/// Nodes in a plain array, for testing the tree alone.
struct ArrayNodes: OrderNodes {
    var links: [OrderLinks]
    subscript(links node: StreakIndex, tree tree: OrderTree) -> OrderLinks {
        get { links[Int(node.rawValue)] }
        set { links[Int(node.rawValue)] = newValue }
    }

    subscript(links node: StreakIndex) -> OrderLinks {
        get { links[Int(node.rawValue)] }
        set { links[Int(node.rawValue)] = newValue }
    }
}

@Suite("Typer order (treap)")
struct TyperOrderTests {
    /// Random inserts and removes against a sorted array, checking every property
    /// after each step: in-order sequence, ranks, node(at:), the first k, sizes (the
    /// tree's own whole check as often as `TestDepth` says).
    @Test("random inserts and removes keep the order, ranks and sizes of a sorted array", arguments: [1, 2, 3, 4, 5])
    func randomAgainstArray(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        let capacity = 300
        var nodes = ArrayNodes(links: Array(repeating: OrderLinks(), count: capacity))
        var keys = [Int](repeating: 0, count: capacity)
        var tree = TyperOrder()
        var reference: [StreakIndex] = [] // sorted by key, then node number
        let precedes = { (a: StreakIndex, b: StreakIndex) -> Bool in
            (keys[Int(a.rawValue)], a) < (keys[Int(b.rawValue)], b)
        }
        for step in 1...3000 {
            if reference.count < capacity && (reference.isEmpty || generator.next() % 3 != 0) {
                let free = (0..<Int32(capacity)).map(StreakIndex.init(rawValue:)).filter { !reference.contains($0) }
                let node = free[Int(generator.next() % UInt64(free.count))]
                keys[Int(node.rawValue)] = Int(generator.next() % 50)
                let point = tree.insertionPoint(for: node, in: nodes, precedes: precedes)
                tree.attach(node, at: point, priority: UInt32(truncatingIfNeeded: generator.next()), in: &nodes)
                reference.append(node)
                reference.sort(by: precedes)
            } else {
                let node = reference.remove(at: Int(generator.next() % UInt64(reference.count)))
                tree.remove(node, in: &nodes)
                #expect(nodes[links: node] == OrderLinks(), "a removed node is unlinked")
            }
            // The whole tree's check, after every step when thorough (TestDepth),
            // else every 16th and the last; the cheaper ones below, every step.
            if TestDepth.checks(step: step) || step == 3000 {
                #expect(tree.violations(in: nodes, limit: capacity, precedes: precedes).isEmpty, "step \(step)")
            }
            #expect(tree.count(in: nodes) == reference.count)
            var inOrder: [StreakIndex] = []
            tree.forEach(in: nodes) {
                inOrder.append($0); return true
            }
            #expect(inOrder == reference)
            let probe = reference.isEmpty ? nil : reference[Int(generator.next() % UInt64(reference.count))]
            if let probe {
                let rank = tree.rank(of: probe, in: nodes)
                #expect(reference[rank] == probe)
                #expect(tree.node(at: rank, in: nodes) == probe)
            }
            var head: [StreakIndex] = []
            tree.collect(first: 4, in: nodes, into: &head)
            #expect(head == Array(reference.prefix(4)))
        }
        #expect(tree.node(at: reference.count, in: nodes) == nil)
    }

    @Test(
        "the checker finds a broken size, a broken parent link and nodes out of order",
        .enabled(
            if: Engine.hasInvariantChecker,
            "this build has no invariant checker (it is empty without TYPINGD_INTERNAL_CHECKS)"))
    func checkerFindsDamage() {
        var nodes = ArrayNodes(links: Array(repeating: OrderLinks(), count: 8))
        var tree = TyperOrder()
        let precedes = { (a: StreakIndex, b: StreakIndex) -> Bool in a < b }
        for node in (0..<Int32(8)).map(StreakIndex.init(rawValue:)) {
            tree.attach(
                node, at: tree.insertionPoint(for: node, in: nodes, precedes: precedes),
                priority: UInt32(truncatingIfNeeded: Mixer.mix(UInt64(node.rawValue))), in: &nodes)
        }
        #expect(tree.violations(in: nodes, limit: 8, precedes: precedes).isEmpty)
        var damaged = nodes
        damaged[links: tree.root].size += 1
        #expect(tree.violations(in: damaged, limit: 8, precedes: precedes).contains { $0.contains("counts") })
        damaged = nodes
        let child = !nodes[links: tree.root].left.isNone ? nodes[links: tree.root].left : nodes[links: tree.root].right
        damaged[links: child].parent = .none
        #expect(tree.violations(in: damaged, limit: 8, precedes: precedes).contains { $0.contains("as its parent") })
        #expect(tree.violations(in: nodes, limit: 8, precedes: { a, b in a > b }).contains { $0.contains("precedes") })
    }
}
