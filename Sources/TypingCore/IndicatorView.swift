/// What one viewer sees under the message list: who is typing and the phrase.
///
/// Views are immutable and shared: every member who is not typing sees the same
/// view object, so it is built (and, by the encoder, serialized) once per change,
/// however large the conversation.
public final class IndicatorView: Sendable, Equatable {
    /// The user ids the viewer sees typing, in streak order.
    public let typing: [Identifier]
    /// The phrase, such as "Alice and Bob are typing...", or "" when nobody types.
    public let text: String

    /// The empty indicator every viewer starts from.
    public static let empty = IndicatorView(typing: [], text: "")

    /// Creates a view.
    public init(typing: [Identifier], text: String) {
        self.typing = typing
        self.text = text
    }

    /// True when nobody is shown typing.
    public var isEmpty: Bool { typing.isEmpty }

    /// Equal when the ids and the text have the same bytes (or are the same object).
    public static func == (lhs: IndicatorView, rhs: IndicatorView) -> Bool {
        lhs === rhs || (lhs.typing == rhs.typing && lhs.text.sameBytes(as: rhs.text))
    }
}
