/// One decoded input line: a command with its optional id and time.
public struct Request: Sendable, Equatable {
    /// The physical line number the command came from (the first line is 1).
    public var line: Int
    /// The client's id, echoed in the reply.
    public var id: RequestID?
    /// The command's time in milliseconds (manual clock only).
    public var at: Int?
    /// What to do.
    public var command: Command

    /// Creates a request.
    public init(line: Int, id: RequestID? = nil, at: Int? = nil, command: Command) {
        self.line = line
        self.id = id
        self.at = at
        self.command = command
    }
}
