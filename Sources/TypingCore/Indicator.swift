/// An `indicator` event: what `viewer` now sees in `conv`.
public struct Indicator: Sendable, Equatable {
    /// The time of the step, in milliseconds.
    public var at: Int
    /// The conversation.
    public var conv: Identifier
    /// The member this indicator is for.
    public var viewer: Identifier
    /// The typers and phrase the viewer sees.
    public var view: IndicatorView

    /// Creates an indicator event.
    public init(at: Int, conv: Identifier, viewer: Identifier, view: IndicatorView) {
        self.at = at
        self.conv = conv
        self.viewer = viewer
        self.view = view
    }
}
