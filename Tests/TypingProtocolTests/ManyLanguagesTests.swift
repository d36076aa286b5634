import Testing
import TypingCore
import TypingProtocol

/// A room whose viewers read more languages than a render searches linearly
/// (``VariantViews/linearLimit``): each viewer still gets their own table's text,
/// render after render, and the stored variants stay one per key.
@Suite("Many languages in one room")
struct ManyLanguagesTests {
    /// Table `index`: its locale `x<index>` (the tag `x0`, `x1`, …), a verb that names it.
    static func table(_ index: Int) -> PhraseTable {
        let text =
            #"{"locale":"x\#(index)","names":{"0+1":"someone","0+n":"{r} people","1":"{0}","1+1":"{0} and 1 more","1+n":"{0} and {r} more","2":"{0} and {1}","2+1":"{0}, {1} and 1 more","2+n":"{0}, {1} and {r} more","3":"{0}, {1} and {2}"},"verbs":{"typing":"types-\#(index)","recording_audio":"records-\#(index)","recording_video":"films-\#(index)","sending_photo":"photo-\#(index)","sending_video":"video-\#(index)","sending_file":"file-\#(index)","sharing_location":"where-\#(index)"},"clause":"{names} {verb}","separator":"; ","end":"."}"#
        let result: Result<PhraseTable, PhraseTable.Error> = Array(text.utf8).withUnsafeBytes { raw in
            Result { () throws(PhraseTable.Error) in try PhraseTableFile.decode(raw) }
        }
        guard case .success(let table) = result else { preconditionFailure("test table \(index): \(result)") }
        return table
    }

    @Test(
        "40 languages, 120 viewers: everyone reads their own table, render after render",
        arguments: [EngineConfiguration.Audience.members, .open])
    func ownTable(audience: EngineConfiguration.Audience) throws {
        let languages = 40
        let book = try PhraseBook(tables: (0..<languages).map(Self.table))
        var engine = Engine(configuration: EngineConfiguration(audience: audience, listStyle: .group, phrases: book))
        var events: [Event] = []
        let viewers = 120
        for v in 0..<viewers {
            engine.apply(
                Request(
                    .join(
                        conv: Identifier("g"), user: Identifier("v\(v)"), name: "V\(v)",
                        locale: "x\(v % languages)")), to: &events)
            if audience == .open {
                engine.apply(
                    Request(
                        .open(
                            conv: Identifier("g"), user: Identifier("v\(v)"),
                            view: v % 3 == 0 ? .list : .chat)), to: &events)
            }
        }
        let activities: [Activity] = [.typing, .recordingAudio, .typing, .sendingPhoto]
        for step in 0..<12 {
            events = []
            let typer = step % 5
            engine.apply(
                Request(
                    .type(
                        conv: Identifier("g"), user: Identifier("v\(typer)"),
                        activity: activities[step % activities.count]), at: 100 * step + 1), to: &events)
            for case .indicator(let indicator) in events where !indicator.view.text.isEmpty {
                let v = Int(indicator.viewer.description.dropFirst())!
                let own = "-\(v % languages)"
                #expect(
                    indicator.view.text.contains(own + ".") || indicator.view.text.contains(own + ";"),
                    "step \(step): v\(v) (x\(v % languages)) got \(indicator.view.text)")
            }
            #expect(!events.isEmpty)
            engine.checkInvariants()
        }
        let main = engine.conversations[try #require(engine.findConversation(Identifier("g")))][location: .main]
        #expect(Set(main.variants.entries.map(\.key)).count == main.variants.count, "one stored variant per key")
    }
}
