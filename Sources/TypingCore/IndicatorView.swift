/// What one viewer sees under the message list: who is typing and the phrase.
///
/// Views are immutable and shared: every member who is not typing sees the same
/// view object, so it is built (and, by the encoder, serialized) once per change,
/// however large the conversation.
public final class IndicatorView: Sendable, Equatable {
    /// The user ids the viewer sees typing, in streak order.
    public let typing: [Identifier]
    /// The UTF-8 bytes of the phrase.
    public let textBytes: [UInt8]

    /// The empty indicator every viewer starts from.
    public static let empty = IndicatorView(typing: [], textBytes: [])

    /// Creates a view.
    public init(typing: [Identifier], textBytes: [UInt8]) {
        self.typing = typing
        self.textBytes = textBytes
    }

    /// Creates a view from a phrase given as a string.
    public convenience init(typing: [Identifier], text: String) {
        self.init(typing: typing, textBytes: Array(text.utf8))
    }

    /// The phrase, such as "Alice and Bob are typing...", or "" when nobody types.
    public var text: String { String(decoding: textBytes, as: UTF8.self) }

    /// True when nobody is shown typing.
    public var isEmpty: Bool { typing.isEmpty }

    /// Equal when the ids and the text have the same bytes (or are the same object).
    public static func == (lhs: IndicatorView, rhs: IndicatorView) -> Bool {
        lhs === rhs || (lhs.textBytes == rhs.textBytes && lhs.typing == rhs.typing)
    }
}
