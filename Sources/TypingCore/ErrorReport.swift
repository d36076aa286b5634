/// An `error` event: the line was not applied, and why. It is also what the decoder
/// throws for a line it cannot turn into a request.
public struct ErrorReport: Error, Sendable, Equatable {
    /// The line number.
    public var line: Int
    /// The command's id, when the id itself was valid.
    public var id: RequestID?
    /// The machine-readable reason.
    public var code: ErrorCode
    /// A sentence for a person: what was wrong and where.
    public var message: String
    /// The field at fault, for field and membership errors.
    public var field: String?
    /// jansson's column (in characters, from 1) for `bad_json`, when it has one.
    public var column: Int?

    /// Creates an error report.
    public init(line: Int, id: RequestID? = nil, code: ErrorCode, message: String,
                field: String? = nil, column: Int? = nil) {
        self.line = line
        self.id = id
        self.code = code
        self.message = message
        self.field = field
        self.column = column
    }
}
