/// An `ok` event: the command on `line` that carried `id` was applied.
public struct Acknowledgement: Sendable, Equatable {
    /// The command's line number.
    public var line: Int
    /// The command's id.
    public var id: RequestID

    /// Creates an acknowledgement.
    public init(line: Int, id: RequestID) {
        self.line = line
        self.id = id
    }
}
