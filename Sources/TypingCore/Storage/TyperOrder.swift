/// The links of one node of a ``TyperOrder``: kept in the streak's record, so the
/// tree allocates nothing of its own.
package struct OrderLinks: Equatable {
    package var left = StreakIndex.none
    package var right = StreakIndex.none
    package var parent = StreakIndex.none
    /// The nodes in this node's subtree, itself included (0 while in no tree).
    package var size: Int32 = 0
    /// The treap priority: a parent's is never below its children's.
    var priority: UInt32 = 0

    /// The links of a node in no tree.
    package init() {}

    init(left: StreakIndex, right: StreakIndex, parent: StreakIndex, size: Int32, priority: UInt32) {
        (self.left, self.right, self.parent, self.size, self.priority) = (left, right, parent, size, priority)
    }
}

/// Which of a streak's two sets of links a tree uses: its location's order of
/// typers, or its activity's (Protocol.md#activities-recording-sending-sharing).
package enum OrderTree: Sendable {
    case location, group
}

/// Where a ``TyperOrder`` keeps its nodes' links: the engine's streak slab (and a
/// plain array in the tree's own tests).
package protocol OrderNodes {
    /// The links of node `node` in the tree `tree` names.
    subscript(links node: StreakIndex, tree tree: OrderTree) -> OrderLinks { get set }
}

/// The typers of one conversation, in the order viewers see them: an order-statistic
/// treap whose nodes are streaks, so that every change costs O(log typers) and
/// reading the first k costs O(k + log typers), however many type in the room.
///
/// Insertion is in two steps, because the order is the engine's (named typers first,
/// then `--order`): ``insertionPoint(for:in:precedes:)`` walks down comparing, without
/// changing anything, and ``attach(_:at:priority:in:)`` links the node there and
/// rotates it up by priority. Priorities come from a seeded hash: the shape is random
/// and cannot be steered from outside, so the depth is O(log typers) expected.
package struct TyperOrder: Equatable {
    /// Which links of the nodes this tree uses.
    let tree: OrderTree
    /// The root node, or `none`.
    package private(set) var root = StreakIndex.none
    /// The named typers (always the first ones).
    package var namedCount = 0

    /// An empty tree over the links `tree` names.
    package init(_ tree: OrderTree = .location) {
        self.tree = tree
    }

    /// The number of typers.
    package func count<Nodes: OrderNodes>(in nodes: Nodes) -> Int {
        root == .none ? 0 : Int(nodes[links: root, tree: tree].size)
    }

    /// True when nobody types.
    var isEmpty: Bool { root == .none }

    /// Where `node` goes: under `parent`, on its left or right (parent `none`: as the root).
    package struct Point {
        var parent: StreakIndex
        var left: Bool
    }

    /// Where `node` belongs among the others, by `precedes(a, b)` (true when `a` is
    /// listed before `b`): after every node it does not precede. O(depth).
    package func insertionPoint<Nodes: OrderNodes>(
        for node: StreakIndex, in nodes: Nodes,
        precedes: (StreakIndex, StreakIndex) -> Bool
    ) -> Point {
        var point = Point(parent: .none, left: false)
        var current = root
        while current != .none {
            point.parent = current
            point.left = precedes(node, current)
            current = point.left ? nodes[links: current, tree: tree].left : nodes[links: current, tree: tree].right
        }
        return point
    }

    /// Links `node` (in no tree) at `point`, then rotates it up while its priority
    /// is above its parent's. O(depth).
    package mutating func attach<Nodes: OrderNodes>(
        _ node: StreakIndex, at point: Point, priority: UInt32, in nodes: inout Nodes
    ) {
        nodes[links: node, tree: tree] = OrderLinks(
            left: .none, right: .none, parent: point.parent, size: 1, priority: priority)
        if point.parent == .none {
            root = node
            return
        }
        if point.left {
            nodes[links: point.parent, tree: tree].left = node
        } else {
            nodes[links: point.parent, tree: tree].right = node
        }
        var ancestor = point.parent
        while ancestor != .none {
            nodes[links: ancestor, tree: tree].size += 1
            ancestor = nodes[links: ancestor, tree: tree].parent
        }
        while nodes[links: node, tree: tree].parent != .none
            && nodes[links: nodes[links: node, tree: tree].parent, tree: tree].priority < priority
        {
            rotateUp(node, in: &nodes)
        }
    }

    /// Unlinks `node`: rotates it down below the child of higher priority until it
    /// has at most one child, then puts that child in its place. O(depth).
    package mutating func remove<Nodes: OrderNodes>(_ node: StreakIndex, in nodes: inout Nodes) {
        while true {
            let left = nodes[links: node, tree: tree].left, right = nodes[links: node, tree: tree].right
            if left == .none || right == .none { break }
            rotateUp(
                nodes[links: left, tree: tree].priority > nodes[links: right, tree: tree].priority ? left : right,
                in: &nodes)
        }
        let links = nodes[links: node, tree: tree]
        let child = links.left != .none ? links.left : links.right
        if child != .none { nodes[links: child, tree: tree].parent = links.parent }
        replace(node, by: child, under: links.parent, in: &nodes)
        var ancestor = links.parent
        while ancestor != .none {
            nodes[links: ancestor, tree: tree].size -= 1
            ancestor = nodes[links: ancestor, tree: tree].parent
        }
        nodes[links: node, tree: tree] = OrderLinks()
    }

    /// The place of `node` in the order, from 0. O(depth).
    package func rank<Nodes: OrderNodes>(of node: StreakIndex, in nodes: Nodes) -> Int {
        var rank = Int(size(nodes[links: node, tree: tree].left, in: nodes))
        var current = node
        var parent = nodes[links: node, tree: tree].parent
        while parent != .none {
            if nodes[links: parent, tree: tree].right == current {
                rank += Int(size(nodes[links: parent, tree: tree].left, in: nodes)) + 1
            }
            current = parent
            parent = nodes[links: parent, tree: tree].parent
        }
        return rank
    }

    /// The node at place `index`, if any. O(depth).
    package func node<Nodes: OrderNodes>(at index: Int, in nodes: Nodes) -> StreakIndex? {
        var index = Int32(clamping: index)
        var current = root
        while current != .none {
            let leftSize = size(nodes[links: current, tree: tree].left, in: nodes)
            if index < leftSize {
                current = nodes[links: current, tree: tree].left
            } else if index == leftSize {
                return current
            } else {
                index -= leftSize + 1
                current = nodes[links: current, tree: tree].right
            }
        }
        return nil
    }

    /// Calls `body` with the nodes in order until it returns false. O(k + depth)
    /// for the first k.
    package func forEach<Nodes: OrderNodes>(in nodes: Nodes, _ body: (StreakIndex) -> Bool) {
        var current = root
        guard current != .none else { return }
        while nodes[links: current, tree: tree].left != .none { current = nodes[links: current, tree: tree].left }
        while current != .none {
            guard body(current) else { return }
            if nodes[links: current, tree: tree].right != .none {
                current = nodes[links: current, tree: tree].right
                while nodes[links: current, tree: tree].left != .none {
                    current = nodes[links: current, tree: tree].left
                }
            } else {
                var child = current
                current = nodes[links: current, tree: tree].parent
                while current != .none && nodes[links: current, tree: tree].right == child {
                    child = current
                    current = nodes[links: current, tree: tree].parent
                }
            }
        }
    }

    /// The first `limit` nodes, in order, into `head` (emptied first).
    package func collect<Nodes: OrderNodes>(first limit: Int, in nodes: Nodes, into head: inout [StreakIndex]) {
        head.removeAll(keepingCapacity: true)
        guard limit > 0 else { return }
        forEach(in: nodes) { node in
            head.append(node)
            return head.count < limit
        }
    }

    /// The size of the subtree at `node` (`none`: none).
    private func size<Nodes: OrderNodes>(_ node: StreakIndex, in nodes: Nodes) -> Int32 {
        node == .none ? 0 : nodes[links: node, tree: tree].size
    }

    /// Puts `replacement` (or nothing, `none`) where `node` hangs under `parent`.
    private mutating func replace<Nodes: OrderNodes>(
        _ node: StreakIndex, by replacement: StreakIndex, under parent: StreakIndex,
        in nodes: inout Nodes
    ) {
        if parent == .none {
            root = replacement
        } else if nodes[links: parent, tree: tree].left == node {
            nodes[links: parent, tree: tree].left = replacement
        } else {
            nodes[links: parent, tree: tree].right = replacement
        }
    }

    /// Rotates `node` above its parent, keeping the in-order sequence and the sizes.
    private mutating func rotateUp<Nodes: OrderNodes>(_ node: StreakIndex, in nodes: inout Nodes) {
        let parent = nodes[links: node, tree: tree].parent
        let grandparent = nodes[links: parent, tree: tree].parent
        let parentSize = nodes[links: parent, tree: tree].size
        if nodes[links: parent, tree: tree].left == node {
            let moved = nodes[links: node, tree: tree].right
            nodes[links: parent, tree: tree].left = moved
            if moved != .none { nodes[links: moved, tree: tree].parent = parent }
            nodes[links: node, tree: tree].right = parent
        } else {
            let moved = nodes[links: node, tree: tree].left
            nodes[links: parent, tree: tree].right = moved
            if moved != .none { nodes[links: moved, tree: tree].parent = parent }
            nodes[links: node, tree: tree].left = parent
        }
        nodes[links: parent, tree: tree].parent = node
        nodes[links: node, tree: tree].parent = grandparent
        replace(parent, by: node, under: grandparent, in: &nodes)
        nodes[links: parent, tree: tree].size =
            1 + size(nodes[links: parent, tree: tree].left, in: nodes)
            + size(nodes[links: parent, tree: tree].right, in: nodes)
        nodes[links: node, tree: tree].size = parentSize
    }
}

extension TyperOrder {
    /// What is wrong with the tree: links that disagree, wrong sizes, priorities out
    /// of heap order, nodes out of order by `precedes`, a cycle. Empty when sound.
    package func violations<Nodes: OrderNodes>(
        in nodes: Nodes, limit: Int, precedes: (StreakIndex, StreakIndex) -> Bool
    ) -> [String] {
        #if TYPINGD_INTERNAL_CHECKS
        var problems: [String] = []
        if root != .none && nodes[links: root, tree: tree].parent != .none {
            problems.append("the root \(root) has a parent")
        }
        var visited = 0
        /// Checks the subtree at `node`, hanging under `parent`; returns its size.
        func walk(_ node: StreakIndex, parent: StreakIndex) -> Int32 {
            guard node != .none, problems.isEmpty else { return 0 }
            visited += 1
            guard visited <= limit else {
                problems.append("the typer tree holds more nodes than there are streaks (a cycle?)")
                return 0
            }
            let links = nodes[links: node, tree: tree]
            if links.parent != parent {
                problems.append("node \(node) names \(links.parent) as its parent, not \(parent)")
            }
            for child in [links.left, links.right]
            where child != .none && nodes[links: child, tree: tree].priority > links.priority {
                problems.append("node \(child) has a higher priority than its parent \(node)")
            }
            let size = 1 + walk(links.left, parent: node) + walk(links.right, parent: node)
            if size != links.size { problems.append("node \(node) counts \(links.size) nodes under it, holds \(size)") }
            return size
        }
        _ = walk(root, parent: .none)
        guard problems.isEmpty else { return problems }
        var previous = StreakIndex.none, index = 0
        forEach(in: nodes) { node in
            if previous != .none && precedes(node, previous) {
                problems.append("typer \(node) is listed after \(previous), which it precedes")
            }
            if rank(of: node, in: nodes) != index {
                problems.append("typer \(node) is at \(index) but ranks \(rank(of: node, in: nodes))")
            }
            previous = node
            index += 1
            return problems.isEmpty
        }
        return problems
        #else
        return []
        #endif
    }
}
