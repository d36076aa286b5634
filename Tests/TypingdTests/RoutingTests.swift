import Foundation
import Testing
import TypingProtocol

/// The cluster example's router (examples/cluster/common.py) routes by the rules of
/// Protocol.md ("Running several typingd processes"): FNV-1a (32 bits) of the
/// conversation id's UTF-8 bytes, modulo the partitions. Its own code is run here,
/// on the published test vectors and on ids of every shape, against the rule.
@Suite("Cluster routing (common.py)")
struct RoutingTests {
    /// The rule (TypingProtocol's, as Protocol.md states it).
    static func partition(_ conv: String, among count: Int) -> Int {
        Partition.of(conv, among: count)
    }

    @Test("common.py's partition_of agrees with the rule and the published vectors")
    func commonPy() throws {
        let python = try Tools.require("python3", for: "the router's routing check")
        var ids = ["", "general", "dm:alice:bob", "\u{E9}", "a\u{0}b", "\u{1F600}", String(repeating: "z", count: 256)]
        var generator = SystemRandomNumberGenerator()
        for length in 1...200 {
            let scalars = (0..<(length % 23 + 1)).map { _ in Unicode.Scalar(UInt32.random(in: 0x21...0x2FFF, using: &generator)) ?? "x" }
            ids.append(String(String.UnicodeScalarView(scalars)))
        }
        let input = try String(decoding: JSONSerialization.data(withJSONObject: ids), as: UTF8.self)
        let script = """
        import json, sys
        sys.path.insert(0, "examples/cluster")
        from common import partition_of
        ids = json.loads(sys.stdin.read())
        print(json.dumps([[partition_of(i, n) for n in (1, 4, 7, 64)] for i in ids]))
        """
        let (stdout, stderr, status) = try ExampleProgramTests.run(python, ["-c", script], input: Data(input.utf8))
        #expect(status == 0, "\(stderr)")
        let partitions = try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [[Int]])
        #expect(partitions.count == ids.count)
        for (id, got) in zip(ids, partitions) {
            #expect(got == [1, 4, 7, 64].map { Self.partition(id, among: $0) }, "\(id.debugDescription)")
        }
        // The published vectors (examples/cluster/README.md).
        #expect(partitions[1][1] == 3 && partitions[2][1] == 1 && partitions[3][1] == 1 && partitions[0][1] == 1)
    }
}
