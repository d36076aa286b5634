// The engine in-process, twice: with values (TypingCore), and with the protocol's
// bytes (TypingProtocol), as a chat server would run it behind its own sockets.
import TypingCore
import TypingProtocol

// 1. Values in, values out.
var engine = Engine(configuration: EngineConfiguration(timeout: 3000, style: .compact))
var events: [Event] = []
engine.apply(Request(.join(conv: Identifier("team"), user: Identifier("ana"), name: "Ana")), to: &events)
engine.apply(Request(.join(conv: Identifier("team"), user: Identifier("ben"), name: "Ben")), to: &events)
engine.apply(Request(.join(conv: Identifier("team"), user: Identifier("cy"), name: "Cy")), to: &events)
engine.apply(Request(.type(conv: Identifier("team"), user: Identifier("ana")), at: 100), to: &events)
engine.apply(Request(.type(conv: Identifier("team"), user: Identifier("ben")), at: 200), to: &events)
while let deadline = engine.nextDeadline() { engine.advance(to: deadline, sink: &events) }
for case .indicator(let indicator) in events {
    print(
        "@\(indicator.at) \(indicator.viewer) sees: \(indicator.view.text.isEmpty ? "(nobody)" : indicator.view.text)")
}
let expected = Event.indicator(
    Event.Indicator(
        at: 100, conv: Identifier("team"), viewer: Identifier("ben"),
        view: IndicatorView(typing: [Identifier("ana")], text: "Ana is typing...")))
print("the first event is the one expected:", events.first == expected)

// 2. The protocol's bytes in, bytes out.
var session = Session(configuration: SessionConfiguration(clock: .manual), sink: [UInt8]())
let input = """
    {"cmd":"join","conv":"dm","user":"ana","name":"Ana"}
    {"cmd":"join","conv":"dm","user":"ben","name":"Ben"}
    {"cmd":"type","conv":"dm","user":"ana","at":1000}
    not json

    """
_ = Array(input.utf8).withUnsafeBytes { session.feed($0) }
session.finish()
session.flush()
print(String(decoding: session.sink, as: UTF8.self), terminator: "")
