import Testing
import TypingCore

/// Activities other than typing: told only for the typers listed, and kept in groups
/// only while someone at the location does something else.
@Suite("Activities")
struct ActivityTests {
    @Test("activities come only for the typers listed; the phrase counts every typer")
    func activitiesBeyondTheList() {
        var h = Harness(EngineConfiguration(maxListed: 2))
        h.join("g", "a", "b", "c", "d")
        h.type("g", "a", at: 1)
        h.type("g", "b", at: 2)
        #expect(
            h.run(.type(conv: ID("g"), user: ID("c"), activity: .sendingFile), at: 3) == [
                "@3 g a: [b,c] {typing,sending_file} B is typing; C is sending a file...",
                "@3 g b: [a,c] {typing,sending_file} A is typing; C is sending a file...",
                "@3 g d: [a,b] more 1 A and B are typing; C is sending a file..."
            ])
    }

    @Test("a location keeps activity groups while someone there does something else, and drops them when it is quiet")
    func groupsComeAndGo() {
        var h = Harness()
        h.join("g", "a", "b", "c")
        h.type("g", "a", at: 1)
        let c = h.engine.findConversation(ID("g"))!
        #expect(h.engine.conversations[c].main.groups == nil)
        h.run(.type(conv: ID("g"), user: ID("b"), activity: .recordingAudio), at: 2)
        #expect(h.engine.conversations[c].main.groups != nil)
        h.run(.type(conv: ID("g"), user: ID("b")), at: 3)
        #expect(h.engine.conversations[c].main.groups != nil, "kept until the location is quiet")
        h.run(.send(conv: ID("g"), user: ID("a")), at: 4)
        h.run(.send(conv: ID("g"), user: ID("b")), at: 5)
        #expect(h.engine.conversations[c].main.groups == nil)
    }
}
