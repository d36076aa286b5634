import CNats
@testable import NatsClient
import Testing
@testable import TypingCluster

/// Setup's calls against a cluster that is starting: "no suitable peers for
/// placement" (JetStream 10005) while its nodes join the meta group is asked
/// again; a cluster that never places the replicas is told what to do.
@Suite struct SetupStepTests {
    static let noPlacement = NatsError(NATS_ERR, code: jsErrCode(rawValue: 10005), doing: "making stream TYPINGD")

    @Test func noPlacementWhileNodesJoinIsAskedAgain() throws {
        var calls = 0
        try ClusterControl.step("making stream TYPINGD", deadline: ClusterControl.now() + 30, timeout: 30) {
            () throws(NatsError) in
            calls += 1
            if calls < 3 { throw Self.noPlacement }
        }
        #expect(calls == 3)
    }

    @Test func noPlacementForGoodSaysWhatToDo() {
        let started = ClusterControl.now()
        var calls = 0
        do {
            try ClusterControl.step("making stream TYPINGD", deadline: started + 1, timeout: 1) {
                () throws(NatsError) in
                calls += 1
                throw Self.noPlacement
            }
            Issue.record("a placement that never comes was taken for done")
        } catch {
            #expect(error.description.contains("set REPLICAS to at most their number"), "\(error)")
            #expect(calls > 1, "asked once only")
        }
    }

    @Test func anotherErrorIsNotAskedAgain() {
        var calls = 0
        do {
            try ClusterControl.step("making stream TYPINGD", deadline: ClusterControl.now() + 30, timeout: 30) {
                () throws(NatsError) in
                calls += 1
                throw NatsError(NATS_ERR, code: jsErrCode(rawValue: 10058), doing: "making stream TYPINGD")
            }
        } catch {
            #expect(calls == 1)
        }
    }
}
